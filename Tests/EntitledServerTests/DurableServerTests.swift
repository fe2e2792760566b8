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

/// A full disk, made real with a tiny tmpfs (needs root, as CI and developers have here).
@Suite("A log that cannot be written", .serialized, .enabled(if: TinyFileSystem.canMount))
struct FullDiskTests {
    @Test func aFailedLogWriteIsAnsweredInternalAndStopsWritesWhileReadsGoOn() async throws {
        let directory = try TemporaryDirectory()
        let mount = try TinyFileSystem(at: directory.path + "/tiny", kilobytes: 64)
        defer { mount.unmount() }
        let server = ServerProcess(
            arguments: ["--port", "0", "--data-dir", mount.path + "/data", "--snapshot-interval", "0"],
            workingDirectory: directory.path
        )
        let port = try #require(try server.startAndWaitUntilReady())
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"grant","user":"early","product":"prod_pro"}"#).isOK)

        let padding = String(repeating: "x", count: 200)
        var firstFailure: EntitledResponse?
        for index in 0..<2000 {
            let response = try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_\#(padding)"}"#)
            if !response.isOK {
                firstFailure = response
                break
            }
        }
        let failure = try #require(firstFailure, "the disk never filled up")
        #expect(failure.errorCode == "internal")
        // From now on writes are refused, and say why; reads go on.
        let refused = try await connection.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)
        #expect(refused.errorCode == "internal")
        #expect(refused.error?.message.contains("takes no more changes") == true)
        #expect(try await connection.send(line: #"{"op":"check","user":"early"}"#).active == true)
        #expect(server.stop(with: SIGKILL) != 0)
        let log = server.standardErrorText()
        #expect(log.contains("critical") && log.contains("the log cannot be written"), "\(log)")
    }
}

/// A tmpfs of a fixed size mounted for one test.
struct TinyFileSystem {
    let path: String

    static let canMount: Bool = {
        guard let directory = try? TemporaryDirectory(),
            let probe = try? TinyFileSystem(at: directory.path + "/probe", kilobytes: 64)
        else { return false }
        probe.unmount()
        return true
    }()

    init(at path: String, kilobytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(kilobytes)k", "tmpfs", path]) == 0 else {
            throw TestSupportFailure(description: "cannot mount a tmpfs at \(path)")
        }
        self.path = path
    }

    func unmount() {
        _ = Self.run("/bin/umount", [path])
    }

    private static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
