import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The change feed (`changes`) against the real `entitled` process: pages in order, a read that waits for
/// the next change, what `kill -9` and a restart keep, retention, and who may read it.
@Suite("The change feed in the real server process", .serialized)
struct ChangeFeedProcessTests {
    /// The (sequence, action) of every item of `line`'s `changes`.
    static func items(_ response: EntitledResponse) -> [(UInt64, String)] {
        (response["changes"]?.arrayValue ?? []).map { item in
            (UInt64(item["sequence"]?.intValue ?? -1), item["action"]?.stringValue ?? "?")
        }
    }

    /// Reads the whole feed after `after`, page by page.
    static func readAll(_ connection: EntitledAsyncConnection, after: UInt64 = 0, limit: Int = 100) async throws -> [(UInt64, String)] {
        var read: [(UInt64, String)] = []
        var position = after
        while true {
            let page = try await connection.send(line: #"{"op":"changes","afterSeq":\#(position),"limit":\#(limit)}"#)
            #expect(page.isOK, "\(page.line)")
            read += items(page)
            let next = UInt64(try #require(page["next"]?.intValue))
            let newest = UInt64(try #require(page["newest"]?.intValue))
            if next >= newest { return read }
            position = next
        }
    }

    @Test func everyChangeIsReadOnceInOrderPageByPageAndAfterKillNineAndARestart() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try DurabilityProcessTests.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<30 {
            _ = try await connection.send(line: #"{"op":"grant","user":"u\#(index % 7)","product":"prod_\#(index % 3)"}"#)
        }
        _ = try await connection.send(line: #"{"op":"grant","device":"tablet","product":"prod_a"}"#)
        _ = try await connection.send(line: #"{"op":"grant","device":"tablet","product":"prod_b"}"#)
        _ = try await connection.send(line: #"{"op":"claim","device":"tablet","user":"u1"}"#)
        _ = try await connection.send(line: #"{"op":"define","entitlement":"pro","products":["prod_1"]}"#)
        #expect(try await connection.send(line: #"{"op":"snapshot"}"#).isOK)
        _ = try await connection.send(line: #"{"op":"erase","user":"u0"}"#)
        let expected = try await Self.readAll(connection, limit: 1000)
        // Pages of 4 read the same, and a claim's two items are never split between two pages.
        let paged = try await Self.readAll(connection, limit: 4)
        #expect(paged.map(\.0) == expected.map(\.0) && paged.map(\.1) == expected.map(\.1))
        #expect(expected.filter { $0.1 == "claim" }.map(\.0) == [33, 33])
        #expect(expected.last.map { $0 == (35, "erase") } == true)
        // u0's grants (changes 1, 8, 15, 22, 29) left the feed with the erasure.
        #expect(!expected.contains { [1, 8, 15, 22, 29].contains($0.0) })

        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()
        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        let restarted = try await Self.readAll(connection, limit: 7)
        #expect(restarted.map(\.0) == expected.map(\.0) && restarted.map(\.1) == expected.map(\.1))
        _ = server.stop()
    }

    @Test func aReadWithWaitIsAnsweredWhenTheNextChangeComesOrEmptyWhenItsTimeIsUp() async throws {
        let directory = try TemporaryDirectory()
        let (server, port) = try DurabilityProcessTests.start(directory.path + "/data", in: directory)
        defer { _ = server.stop() }
        let reader = try await EntitledAsyncConnection.local(port: port)
        let writer = try await EntitledAsyncConnection.local(port: port)
        _ = try await writer.send(line: #"{"op":"grant","user":"a","product":"p"}"#)

        let started = ContinuousClock.now
        let empty = try await reader.send(line: #"{"op":"changes","afterSeq":1,"wait":300}"#)
        #expect(empty.isOK && Self.items(empty).isEmpty && empty["next"]?.intValue == 1 && empty["newest"]?.intValue == 1, "\(empty.line)")
        #expect(ContinuousClock.now - started >= .milliseconds(290))

        let waiting = Task { try await reader.send(line: #"{"op":"changes","afterSeq":1,"wait":20000}"#, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(200))
        _ = try await writer.send(line: #"{"op":"grant","user":"b","product":"p","reason":"welcome"}"#)
        let woken = try await waiting.value
        #expect(Self.items(woken).map(\.0) == [2], "\(woken.line)")
        #expect(woken.line.contains(#""reason":"welcome""#) && woken.line.contains(#""user":"b""#))
        // The lines after a waiting read wait with it, and are answered after it, in order.
        let after = try await reader.send(line: #"{"op":"ping"}"#)
        #expect(after.isOK)
    }

    @Test func aReadBeforeWhatTheRetentionKeepsIsRefusedTruncatedWithWhatToDo() async throws {
        let directory = try TemporaryDirectory()
        let (server, port) = try DurabilityProcessTests.start(
            directory.path + "/data", in: directory, extra: ["--feed-retention-changes", "4096", "--fsync", "no"]
        )
        defer { _ = server.stop() }
        let connection = try await EntitledAsyncConnection.local(port: port)
        // Three chunks and a bit: the oldest go.
        let total = 4096 * 3 + 5
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    let writer = try await EntitledAsyncConnection.local(port: port)
                    for index in stride(from: lane, to: total, by: 8) {
                        _ = try await writer.send(line: #"{"op":"grant","user":"u\#(index)","product":"p"}"#)
                    }
                }
            }
            try await group.waitForAll()
        }
        let refused = try await connection.send(line: #"{"op":"changes","afterSeq":0}"#)
        #expect(refused.error?.code == .truncated, "\(refused.line)")
        #expect(refused.error?.message.contains("take a full copy with export") == true)
        let first = try await connection.send(line: #"{"op":"changes","afterSeq":\#(total),"limit":1}"#)
        let oldest = try #require(first["oldestAfterSeq"]?.intValue)
        #expect(oldest > 0 && oldest < total - 4096, "\(first.line)")
        // The refusal says the same, so that a reader starting from the oldest needs no second read.
        #expect(refused["error"]?["oldestAfterSeq"]?.intValue == oldest, "\(refused.line)")
        let kept = try await connection.send(line: #"{"op":"changes","afterSeq":\#(oldest),"limit":1}"#)
        #expect(Self.items(kept).map(\.0) == [UInt64(oldest + 1)], "\(kept.line)")
    }

    @Test func anAfterSeqBeyondTheNewestChangeIsWaitedForThenAnsweredStaleNeverSkipped() async throws {
        let directory = try TemporaryDirectory()
        let (server, port) = try DurabilityProcessTests.start(directory.path + "/data", in: directory, extra: ["--min-seq-wait", "300"])
        defer { _ = server.stop() }
        let reader = try await EntitledAsyncConnection.local(port: port)
        let writer = try await EntitledAsyncConnection.local(port: port)
        _ = try await writer.send(line: #"{"op":"grant","user":"a","product":"p"}"#)
        // A reader that remembers change 5 of a server that has made 1: stale, not an empty page that moves on.
        let stale = try await reader.send(line: #"{"op":"changes","afterSeq":5}"#)
        #expect(stale.error?.code == .stale && stale.error?.message.contains("afterSeq") == true, "\(stale.line)")
        // Answered once the server gets there: what follows change 2, nothing yet.
        let waiting = Task { try await reader.send(line: #"{"op":"changes","afterSeq":2}"#) }
        try await Task.sleep(for: .milliseconds(50))
        _ = try await writer.send(line: #"{"op":"grant","user":"b","product":"p"}"#)
        let answered = try await waiting.value
        #expect(answered.isOK && Self.items(answered).isEmpty && answered["next"]?.intValue == 2, "\(answered.line)")
    }

    @Test func aWaitingReadWhoseClientLeftDoesNotHoldUpAStop() async throws {
        let directory = try TemporaryDirectory()
        let (server, port) = try DurabilityProcessTests.start(directory.path + "/data", in: directory, extra: ["--shutdown-timeout", "25"])
        var reader: RawSocket? = try RawSocket(port: port)
        try reader?.send(#"{"op":"changes","wait":30000}"# + "\n")
        try await Task.sleep(for: .milliseconds(200))
        reader = nil  // closed: the client is gone
        try await Task.sleep(for: .milliseconds(200))
        // Without an answer for the read whose client left, the stop would wait out --shutdown-timeout (25 s).
        let stopping = ContinuousClock.now
        #expect(server.stop() == 0)
        #expect(ContinuousClock.now - stopping < .seconds(15))
    }

    @Test func onlyTheAdminRoleReadsTheFeed() async throws {
        let server = try RunningEntitled(tokens: [
            AuthFileEntry(name: "backend", token: "check-token-0123456789", role: "check"),
            AuthFileEntry(name: "stores", token: "writer-token-0123456789", role: "writer"),
            AuthFileEntry(name: "ops", token: "admin-token-0123456789", role: "admin"),
        ])
        defer { _ = server.stop() }
        for (token, allowed) in [("check-token-0123456789", false), ("writer-token-0123456789", false), ("admin-token-0123456789", true)] {
            let connection = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
            #expect(try await connection.send(line: #"{"op":"auth","token":"\#(token)"}"#).isOK)
            let answer = try await connection.send(line: #"{"op":"changes"}"#)
            #expect(answer.isOK == allowed, "\(token): \(answer.line)")
            if !allowed { #expect(answer.error?.code == .forbidden) }
            await connection.close()
        }
    }
}
