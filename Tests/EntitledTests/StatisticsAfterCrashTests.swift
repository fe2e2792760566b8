import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// What `stats` says about the data directory after a crash of the real process.
@Suite("Statistics after kill -9", .serialized)
struct StatisticsAfterCrashTests {
    @Test func theLogSinceTheSnapshotCountsWhatARestartAfterKillNineReplayed() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try DurabilityProcessTests.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<20 {
            #expect(try await connection.send(line: #"{"op":"grant","user":"user-\#(index)","product":"prod_pro"}"#).isOK)
        }
        let before = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        let bytesBefore = try #require(before["logBytesSinceSnapshot"]?.intValue)
        #expect(bytesBefore > 20 * 50)
        _ = server.stop(with: SIGKILL)

        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        let after = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        #expect(after["changesSinceSnapshot"]?.intValue == 20)
        // The 20 records found in the log (a restart would replay them again), and the new segment's header.
        let bytesAfter = try #require(after["logBytesSinceSnapshot"]?.intValue)
        #expect(bytesAfter > bytesBefore)
        #expect(bytesAfter < bytesBefore + 100)
        #expect(after["logBytesWritten"]?.intValue ?? 0 < bytesBefore)  // this process wrote only a header

        // After a snapshot, only what came after it counts.
        #expect(try await connection.send(line: #"{"op":"snapshot"}"#).isOK)
        let snapshotted = try #require(try await connection.send(line: #"{"op":"stats"}"#)["persistence"])
        #expect((snapshotted["logBytesSinceSnapshot"]?.intValue ?? .max) < 100)
        _ = server.stop(with: SIGKILL)
    }
}
