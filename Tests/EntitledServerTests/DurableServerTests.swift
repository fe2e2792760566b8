import EntitledClient
import EntitledTestSupport
import EntitledServer
import EntitledStorage
import Foundation
import Logging
import Testing

/// An in-process server on a `DurableStore`, for what needs the store's own counters.
@Suite("Durable writes through an in-process server")
struct DurableServerTests {
    @Test func fiftyConcurrentWritersShareFsyncsInsteadOfPayingOneEachWrite() async throws {
        let directory = try TemporaryDirectory()
        let durable = try DurableStore(directory: directory.path + "/data", policy: .always)
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let server = EntitledServer(
            processor: RequestProcessor(durable: durable),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0)),
            logger: logger
        )
        let port = try #require(try await server.start().first?.port)
        // Fifty writers, each on its own connection, sending its next grant as soon as the last one is answered.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<50 {
                group.addTask {
                    let connection = try await EntitledAsyncConnection.local(port: port)
                    for round in 0..<20 {
                        let grant = #"{"op":"grant","user":"w\#(writer)-\#(round)","product":"p"}"#
                        let response = try await connection.send(line: grant)
                        try #require(response.isOK, "\(response.line)")
                    }
                    await connection.close()
                }
            }
            try await group.waitForAll()
        }
        let statistics = durable.log.statistics
        #expect(statistics.records == 1000)
        #expect(statistics.syncs >= 1)
        // Without group commit every write pays its own fsync: exactly 1000. How many share one depends on
        // timing (the deterministic proof is in EntitledStorageTests.GroupCommitTests).
        #expect(statistics.syncs < 1000, "1000 writes from 50 concurrent writers paid \(statistics.syncs) fsyncs")
        #expect(durable.log.acknowledgedSequence == 1000)
        await server.stop()
        durable.close()
    }

    @Test func aWriteIsAnsweredOnlyAfterItsRecordIsSyncedAndLaterAnswersKeepTheirOrder() async throws {
        let directory = try TemporaryDirectory()
        let durable = try DurableStore(directory: directory.path + "/data", policy: .always)
        let server = EntitledServer(
            processor: RequestProcessor(durable: durable),
            configuration: ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
        )
        let port = try #require(try await server.start().first?.port)
        // Raw: the write and the reads behind it go in one write, so the server reads them together.
        let connection = try RawSocket(port: port)
        // A write, then reads pipelined behind it: the reads' answers wait for the write's.
        try connection.send(
            #"{"op":"grant","user":"u1","product":"p","id":1}"# + "\n" + #"{"op":"check","user":"u1","id":2}"# + "\n"
                + #"{"op":"ping","id":3}"# + "\n" + #"{"op":"claim","device":"d","user":"u1","id":4}"# + "\n"
                + #"{"op":"ping","id":5}"# + "\n"
        )
        for expected in 1...5 {
            let response = try connection.readResponse()
            #expect(response["id"]?.intValue == expected)
            #expect(response.isOK)
        }
        #expect(durable.log.statistics.syncs >= 1)
        await server.stop()
        durable.close()
    }
}
