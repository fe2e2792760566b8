import EntitledClient
import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

@Suite("seq in write answers and minSeq on reads, on a standalone server")
struct ChangeNumberOverTCPTests {
    @Test func everyWriteAnswerCarriesTheNumberOfItsChangeOrTheNewestItSaw() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            func write(_ line: String, changes: Bool) async throws -> EntitledResponse {
                let before = server.store.sequence
                let response = try await connection.send(line: line)
                #expect(response.isOK, "\(line) -> \(response.line)")
                #expect(response["seq"]?.intValue == Int(server.store.sequence), "\(line) -> \(response.line)")
                #expect(server.store.sequence == (changes ? before + 1 : before), "\(line)")
                return response
            }
            _ = try await write(#"{"op":"define","entitlement":"premium","products":["pro"]}"#, changes: true)
            let granted = try await write(#"{"op":"grant","user":"u1","product":"pro","idempotencyKey":"k1"}"#, changes: true)
            let replayed = try await write(#"{"op":"grant","user":"u1","product":"pro","idempotencyKey":"k1"}"#, changes: false)
            #expect(replayed["idempotentReplay"]?.boolValue == true)
            #expect(replayed["seq"]?.intValue == granted["seq"]?.intValue)
            let guest = try await write(#"{"op":"grant","device":"d1","product":"pro","duration":"30d"}"#, changes: true)
            _ = try await write(#"{"op":"claim","device":"d1","user":"u1"}"#, changes: true)
            let nothingMoved = try await write(#"{"op":"claim","device":"d1","user":"u1"}"#, changes: false)
            #expect(nothingMoved["claimed"]?.intValue == 0)
            let id = try #require(granted["membership"]?["id"]?.stringValue)
            _ = try await write(#"{"op":"revoke","membership":"\#(id)"}"#, changes: true)
            _ = try await write(#"{"op":"revoke","membership":"\#(id)"}"#, changes: false)
            let guestID = try #require(guest["membership"]?["id"]?.stringValue)
            _ = try await write(
                #"{"op":"event","membership":"\#(guestID)","type":"cancellation","eventId":"e1","eventTime":"2026-01-01T00:00:00Z"}"#, changes: true)
            _ = try await write(#"{"op":"undefine","entitlement":"premium"}"#, changes: true)
            _ = try await write(#"{"op":"erase","user":"u1"}"#, changes: true)

            // Reads carry none: a check's answer is exactly what it was.
            let check = try await connection.send(line: #"{"op":"check","user":"u1"}"#)
            #expect(check.line == #"{"ok":true,"active":false}"#)
        }
    }

    @Test func aReadWithMinSeqWaitsForAWriteOnAnotherConnection() async throws {
        // The longest wait the server allows, and every step on a thread of its own: only the write may
        // answer the read, never the deadline. (In a task, a write sent late by a cooperative pool that
        // other tests' blocking reads held for 30 s once came after the deadline: an early `stale`.)
        try await withTestServer(configure: { $0.minimumSequenceWaitMilliseconds = ServerConfiguration.largestMinimumSequenceWaitMilliseconds }) { server in
            let port = server.port
            let (first, second, granted, customer) = try await onDedicatedThread { () -> (EntitledResponse, EntitledResponse, EntitledResponse, EntitledResponse) in
                let reader = try RawSocket(port: port)
                try reader.send(#"{"op":"check","user":"u1","minSeq":1,"id":1}"# + "\n" + #"{"op":"check","user":"u1","id":2}"# + "\n")
                usleep(100_000)
                let writer = try RawSocket(port: port)
                try writer.send(#"{"op":"grant","user":"u1","product":"pro"}"# + "\n")
                let granted = try writer.readResponse()
                let first = try reader.readResponse()
                let second = try reader.readResponse()
                // Reached already: answered at once.
                try reader.send(#"{"op":"customer","user":"u1","minSeq":1,"id":3}"# + "\n")
                return (first, second, granted, try reader.readResponse())
            }
            #expect(granted["seq"]?.intValue == 1, "\(granted.line)")
            #expect(first["id"]?.intValue == 1)
            #expect(first.active == true, "\(first.line)")
            #expect(second["id"]?.intValue == 2)
            #expect(customer.isOK && customer["id"]?.intValue == 3, "\(customer.line)")
        }
    }

    @Test func minSeqIsTakenByReadsOnlyAndMustBeAChangeNumber() async throws {
        try await withTestServer { server in
            let connection = try await server.connect()
            let onAWrite = try await connection.send(line: #"{"op":"grant","user":"u1","product":"pro","minSeq":1}"#)
            #expect(onAWrite.errorCode == "bad_request")
            #expect(server.store.sequence == 0)
            for value in [#""1""#, "-1", "1.5", "true", "1234567890123456789"] {
                let refused = try await connection.send(line: #"{"op":"check","user":"u1","minSeq":\#(value)}"#)
                #expect(refused.errorCode == "bad_request", "\(value) -> \(refused.line)")
            }
            let zero = try await connection.send(line: #"{"op":"memberships","user":"u1","minSeq":0}"#)
            #expect(zero.isOK)
        }
    }

    @Test func aReadWithMinSeqIsAnsweredStaleOnAStandaloneServerToo() async throws {
        try await withTestServer(configure: { $0.minimumSequenceWaitMilliseconds = 100 }) { server in
            let connection = try await server.connect()
            let stale = try await connection.send(line: #"{"op":"check","user":"u1","minSeq":5}"#)
            #expect(stale.errorCode == "stale", "\(stale.line)")
        }
    }
}
