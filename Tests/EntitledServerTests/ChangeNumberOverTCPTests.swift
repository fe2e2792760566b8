import EntitledClient
import EntitledCore
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
        // A long wait, so that only the write answers the read, however late this task resumes.
        try await withTestServer(configure: { $0.minimumSequenceWaitMilliseconds = 30_000 }) { server in
            let reader = try server.rawSocket()
            try reader.send(#"{"op":"check","user":"u1","minSeq":1,"id":1}"# + "\n" + #"{"op":"check","user":"u1","id":2}"# + "\n")
            try await Task.sleep(for: .milliseconds(100))
            let granted = try await server.connect().send(line: #"{"op":"grant","user":"u1","product":"pro"}"#)
            #expect(granted["seq"]?.intValue == 1)
            let first = try reader.readResponse()
            #expect(first["id"]?.intValue == 1)
            #expect(first.active == true)
            #expect(try reader.readResponse()["id"]?.intValue == 2)

            // Reached already: answered at once.
            try reader.send(#"{"op":"customer","user":"u1","minSeq":1,"id":3}"# + "\n")
            let customer = try reader.readResponse()
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
