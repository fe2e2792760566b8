import EntitledTestSupport
import Foundation
import Testing

/// SIGTERM or SIGINT while `entitled` loads its data directory (issue #44, part 6): the server used to
/// die by the signal's default action, with no log line, its Unix socket file left behind. It stops as
/// at any other moment: a log line, its addresses and socket file released, the lock released, exit 0;
/// it never serves, and the next start loads the same data.
@Suite struct StopWhileLoadingTests {
    /// Memberships in the snapshot: a few seconds of loading in a debug build, so that the signal lands
    /// well inside the load.
    static let memberships = 600_000

    @Test(arguments: [SIGTERM, SIGINT])
    func aStopSignalWhileLoadingStopsTheServerCleanlyBeforeItServes(signal: Int32) throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let socketPath = directory.path + "/entitled.sock"
        try LoadingAnswersTests.seed(data, memberships: Self.memberships)
        // Signals unblocked, as a service manager starts it: the test runner's mask would keep a SIGTERM
        // pending instead of acting, and the test would pass whatever the server did.
        let server = ServerProcess(
            arguments: ["--port", "0", "--socket", socketPath, "--data-dir", data, "--snapshot-interval", "0"],
            workingDirectory: directory.path, unblockedSignals: true
        )
        try server.start()
        #expect(server.waitForStandardError(containing: "answering `loading` while the data loads"), "\(server.standardErrorReadSoFar())")
        #expect(FileManager.default.fileExists(atPath: socketPath))
        server.signal(signal)

        let deadline = ContinuousClock.now + .seconds(60)
        while server.process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        let stillRunning = server.process.isRunning
        if stillRunning { _ = server.stop(with: SIGKILL) }
        #expect(!stillRunning, "still running 60 s after the signal")
        #expect(server.process.terminationReason == .exit, "ended by a signal, not by a stop: \(server.standardErrorReadSoFar())")
        #expect(server.process.terminationStatus == 0)
        let log = server.standardErrorText()
        let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
        #expect(log.contains("\(name): stopping"), "\(log)")
        #expect(log.contains("stopped before serving"), "\(log)")
        #expect(!server.standardOutputText().contains("listening on"), "it served before stopping")
        #expect(!FileManager.default.fileExists(atPath: socketPath), "the Unix socket file was left behind")
        // The lock is free again.
        let lock = open(data + "/LOCK", O_RDWR)
        defer { close(lock) }
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0, "the data directory is still locked")
        flock(lock, LOCK_UN)

        // And the data is whole: the next start serves every membership.
        let next = ServerProcess(arguments: ["--port", "0", "--data-dir", data, "--snapshot-interval", "0"], workingDirectory: directory.path)
        let port = try #require(try next.startAndWaitUntilReady(timeout: .seconds(120)))
        let socket = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(socket) }
        let check = try LoopbackSocket.call(socket, #"{"op":"check","user":"u\#(Self.memberships - 1)","entitlement":"pro"}"#)
        #expect(check.hasPrefix(#"{"ok":true,"active":true"#), "\(check)")
        #expect(next.stop() == 0)
    }
}
