import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-datadir backup` against a real server process that keeps writing and snapshotting: each copy
/// verifies, a server starts from it, and it holds every write acknowledged before the backup began.
@Suite("Backups of a running server's data directory", .serialized)
struct LiveBackupTests {
    /// The users whose grants were acknowledged, in order, by a writer on its own thread.
    final class Writer: @unchecked Sendable {
        private let lock = NSLock()
        private var users: [String] = []
        private var stopped = false
        private var failure: String?
        private let done = DispatchSemaphore(value: 0)

        init(port: Int) {
            Thread.detachNewThread { [self] in
                let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: port))
                var index = 0
                while !lock.withLock({ stopped }) {
                    let user = "backup_user_\(index)"
                    do {
                        let answer = try client.send(.grant(user: user, product: "prod_pro", duration: "1y"))
                        guard answer.isOK else { throw TestSupportFailure(description: answer.line) }
                        lock.withLock { users.append(user) }
                    } catch {
                        lock.withLock { failure = "\(error)" }
                        break
                    }
                    index += 1
                }
                done.signal()
            }
        }

        var acknowledged: [String] { lock.withLock { users } }

        func stop() -> String? {
            lock.withLock { stopped = true }
            done.wait()
            return lock.withLock { failure }
        }
    }

    @Test func backupsTakenDuringWritesAndSnapshotsHoldEveryAcknowledgedWriteAndAServerStartsFromThem() throws {
        // A snapshot every second: the backups run while snapshots replace files and remove the log.
        let server = try RunningEntitled(arguments: ["--snapshot-interval", "1"])
        let data = server.directory.path + "/entitled-data"
        let writer = Writer(port: server.port)
        var backups: [(directory: String, acknowledgedBefore: [String])] = []
        Thread.sleep(forTimeInterval: 0.5)
        // And until a first write is acknowledged: on a loaded machine the writer may not have had one by now.
        let firstWrite = Date().addingTimeInterval(30)
        while writer.acknowledged.isEmpty, Date() < firstWrite { Thread.sleep(forTimeInterval: 0.05) }
        for round in 0..<4 {
            let before = writer.acknowledged
            let destination = server.directory.path + "/backup-\(round)"
            let (status, output) = try ServerProcess.runToCompletion("entitled-datadir", ["backup", data, destination])
            #expect(status == 0, "\(output)")
            #expect(output.contains("verified"), "\(output)")
            backups.append((destination, before))
            Thread.sleep(forTimeInterval: 0.6)
        }
        #expect(writer.stop() == nil)
        server.stop()

        for backup in backups {
            #expect(!backup.acknowledgedBefore.isEmpty)
            let (status, report) = try ServerProcess.runToCompletion("entitled-datadir", ["verify", backup.directory])
            #expect(status == 0, "\(report)")
            // Owner only, as the server makes its own.
            let mode = (try FileManager.default.attributesOfItem(atPath: backup.directory)[.posixPermissions] as? NSNumber)?.intValue
            #expect(mode == 0o700)

            let restored = ServerProcess(arguments: ["--port", "0", "--data-dir", backup.directory, "--log-level", "warning"], workingDirectory: backup.directory)
            let port = try #require(try restored.startAndWaitUntilReady())
            defer { _ = restored.stop() }
            let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: port))
            // Every write acknowledged before the backup began is there: the newest ones (the last the copy
            // could have missed) all, the others one in ten.
            let users = backup.acknowledgedBefore
            let checked = users.enumerated().filter { index, _ in index % 10 == 0 || index >= users.count - 100 }.map(\.element)
            var missing: [String] = []
            for user in checked where try client.send(.check(user: user, product: "prod_pro")).body["active"]?.boolValue != true {
                missing.append(user)
            }
            #expect(missing.isEmpty, "\(backup.directory) lacks \(missing.count) acknowledged writes, first \(missing.prefix(3))")
        }
    }

    @Test func aBackupIntoAnExistingDirectoryOrFromADamagedOneIsRefused() throws {
        let server = try RunningEntitled()
        let client = EntitledConnection(address: .tcp(host: "127.0.0.1", port: server.port))
        #expect(try client.send(.grant(user: "u", product: "p")).isOK)
        // Killed, so that the grant stays in the log (a graceful stop would snapshot it and remove the log).
        server.kill()
        let data = server.directory.path + "/entitled-data"

        let existing = server.directory.path + "/existing"
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: false)
        let refused = try ServerProcess.runToCompletion("entitled-datadir", ["backup", data, existing])
        #expect(refused.status == 1)
        #expect(refused.output.contains("backup failed") && refused.output.contains(existing), "\(refused.output)")

        // A byte flipped inside the log's only record: the copy stops there instead of leaving it out.
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: data).first { $0.hasPrefix("log-") })
        let path = data + "/" + segment
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let header = 28  // a segment's header (Protocol/STORAGE.md)
        #expect(bytes.count > header + 40)
        bytes[header + 30] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let damaged = try ServerProcess.runToCompletion("entitled-datadir", ["backup", data, server.directory.path + "/copy"])
        #expect(damaged.status == 1, "\(damaged.output)")
        #expect(damaged.output.contains("backup failed"), "\(damaged.output)")
    }
}
