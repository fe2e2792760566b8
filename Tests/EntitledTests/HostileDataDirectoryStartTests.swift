import EntitledCore
import EntitledStorage
import EntitledTestSupport
import Foundation
import Testing

/// The real `entitled` started on a data directory someone with write access made hostile (issue #44,
/// part 5): a FIFO named as a log segment used to leave it answering `loading` for ever; a sparse segment
/// of 6 GiB made its recovery abort under an address-space limit, since the segment was read whole.
@Suite struct HostileDataDirectoryStartTests {
    static let firstSegment = "log-00000000000000000001.wal"

    /// A data directory in `parent` whose one segment holds `grants` changes, written by a server-side
    /// store and closed.
    static func seed(_ directory: String, grants: Int) throws {
        let durable = try DurableStore(directory: directory, policy: .no)
        for index in 0..<grants {
            _ = try durable.store.grant(Grant(subject: .user("u\(index)"), productId: "prod_pro", source: .stripe))
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while durable.log.acknowledgedSequence < durable.store.sequence, ContinuousClock.now < deadline { usleep(1000) }
        durable.close()
    }

    @Test func aFIFONamedAsALogSegmentStopsTheStartWithTheReasonInsteadOfLoadingForEver() throws {
        let parent = try TemporaryDirectory()
        let data = parent.path + "/data"
        try Self.seed(data, grants: 3)
        let fifo = data + "/" + "log-00000000000000000004.wal"
        try #require(mkfifo(fifo, 0o600) == 0)
        let run = try BoundedRun.run("entitled", ["--port", "0", "--data-dir", data, "--snapshot-interval", "0"], timeout: .seconds(60))
        #expect(!run.timedOut, "entitled was still loading after 60 s: \(run.output)")
        #expect(run.status == 1 && !run.endedBySignal, "\(run.output)")
        #expect(run.output.contains("cannot open the data directory: \(fifo) is a FIFO, not a regular file"), "\(run.output)")
        #expect(run.output.contains("not_a_regular_file"), "\(run.output)")
    }

    @Test func aSparseSixGiBSegmentIsRecoveredUnderAFourGiBAddressSpaceLimit() throws {
        let parent = try TemporaryDirectory()
        let data = parent.path + "/data"
        try Self.seed(data, grants: 3)
        let segment = data + "/" + Self.firstSegment
        let records = try #require(FileSystemSize.of(segment))
        try #require(truncate(segment, 6 << 30) == 0)
        let server = ServerProcess(
            arguments: ["--port", "0", "--data-dir", data, "--snapshot-interval", "0"], workingDirectory: parent.path,
            addressSpaceKiB: 4 << 20
        )
        defer { if server.process.isRunning { _ = server.stop() } }
        let port = try #require(try server.startAndWaitUntilReady(timeout: .seconds(60)))
        #expect(port > 0)
        // Its zeros were unused space: the segment holds its records only again.
        #expect(FileSystemSize.of(segment) == records)
        #expect(server.stop() == 0)
    }
}

/// A file's size by `stat`, or `nil` when it is missing.
enum FileSystemSize {
    static func of(_ path: String) -> Int? {
        var status = stat()
        return stat(path, &status) == 0 ? Int(status.st_size) : nil
    }
}
