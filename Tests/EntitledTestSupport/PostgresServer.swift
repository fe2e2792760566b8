import Foundation
import Synchronization

/// A real PostgreSQL server for one test: its own cluster (`initdb`) in a fresh temporary directory, on a
/// free loopback port, removed when the value is released (or at `close()`).
///
/// The superuser `postgres` has a random password; TCP connections on 127.0.0.1 authenticate with
/// scram-sha-256 (so a wrong password is refused, as in production), connections on the Unix socket in
/// the temporary directory are trusted (the harness's own `psql` uses them). The server runs as this
/// process's user, or as the `postgres` system user when the tests run as root (PostgreSQL refuses root);
/// see `PostgresInstallation`. It can be stopped (`stop()`, a fast shutdown), killed (`kill()`, SIGKILL to
/// the postmaster and every backend) and started again on the same data and port, for the tests of a
/// database that goes away under load; or made a streaming standby of another server and promoted, for the
/// tests of a failover (`init(standbyOf:through:settings:)`). A cluster `main` that Debian's package may
/// have started on 5432 is never used.
///
/// `fsync` is off unless `settings` say otherwise: it makes a test's commits cheap on a shared machine, and
/// loses nothing when the server is killed, since the kernel still holds what it wrote; only a machine
/// crash, which no test makes, would.
public final class PostgresServer: Sendable {
    /// The superuser's name.
    public static let superuser = "postgres"

    public let installation: PostgresInstallation
    /// The temporary directory holding everything: `data`, the socket directory, the log.
    public let directory: String
    public var dataDirectory: String { directory + "/data" }
    /// Where the server's Unix socket is (`.s.PGSQL.<port>`).
    public var socketDirectory: String { directory + "/socket" }
    /// The server's log (standard output and error of the postmaster), appended to by every start.
    public var logFile: String { directory + "/postgres.log" }
    /// The superuser's password (random hexadecimal).
    public let superuserPassword: String
    /// `-c name=value` options given at every start.
    public let settings: [String: String]

    struct State {
        var port = 0
        var isRunning = false
        var isClosed = false
        var isPaused = false
    }
    let state = Mutex(State())

    /// The TCP port on 127.0.0.1: chosen at the first start, kept by the later ones.
    public var port: Int { state.withLock { $0.port } }
    /// Whether the server was started and not stopped or killed since.
    public var isRunning: Bool { state.withLock { $0.isRunning } }

    /// Why PostgreSQL cannot be had here (no binaries, root without a `postgres` user to run it as), or nil.
    ///
    /// Cheap (it looks for files and a user, starts nothing), so a test's trait may call it: an installed
    /// PostgreSQL that then fails to start fails the test with the server's log, it is not skipped.
    public static func unavailableReason() -> String? {
        switch PostgresInstallation.found {
        case .success: nil
        case .failure(let error): error.message
        }
    }

    /// Makes the cluster (`initdb`) and, unless `start` is false, starts the server.
    /// - Parameter settings: server options (`-c name=value`) for every start, over the defaults
    ///   (`fsync=off`, `listen_addresses=127.0.0.1`, ...).
    public convenience init(settings: [String: String] = [:], start: Bool = true) throws {
        try self.init(superuserPassword: Self.randomHex(bytes: 16), settings: settings, start: start) { server in
            try server.initializeCluster()
        }
    }

    /// Makes a fresh directory, fills its data directory with `makeData` (`initdb`, or a base backup of
    /// another server) and, unless `start` is false, starts the server; the directory goes when a step fails.
    init(superuserPassword: String, settings: [String: String], start: Bool, makeData: (PostgresServer) throws -> Void) throws {
        installation = try PostgresInstallation.found.get()
        self.superuserPassword = superuserPassword
        self.settings = settings
        Self.leftoversRemoved
        directory = try Self.makeDirectory(owner: installation.serverUser)
        do {
            try write(String(getpid()), to: directory + "/" + Self.ownerFileName)
            try makeData(self)
            if start { try self.start() }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    deinit {
        close()
    }

    /// Stops the server (fast shutdown, or SIGKILL when that fails) and removes the directory. Idempotent.
    public func close() {
        let closed = state.withLock { state in
            defer { state.isClosed = true }
            return state.isClosed
        }
        if closed { return }
        if state.withLock({ $0.isPaused }) { resume() }
        if (try? stop()) == nil { kill() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server and waits until it accepts connections; the first start picks a free port,
    /// later ones (after `stop()` or `kill()`) reuse it, on the same data (after a kill, PostgreSQL
    /// recovers from its write-ahead log first). A no-op when it is running.
    /// - Throws: `startFailed` with the end of the server's log.
    public func start() throws {
        let (running, known) = state.withLock { ($0.isRunning, $0.port) }
        if running { return }
        if known != 0 {
            try startServer(port: known)
        } else {
            // Another process may take the free port between its discovery and the server's bind: try another.
            var attempt = 0
            while true {
                let candidate = try Self.freeLoopbackPort()
                do {
                    try startServer(port: candidate)
                    return
                } catch PostgresServerError.startFailed(_, let logTail) where logTail.contains("Address already in use") && attempt < 5 {
                    attempt += 1
                }
            }
        }
    }

    /// Stops the server the way an operator's fast shutdown does (`pg_ctl stop -m fast`): open
    /// transactions are rolled back, connections closed, everything written flushed. A no-op when stopped.
    public func stop() throws {
        guard isRunning else { return }
        let result = try installation.run(
            installation.pgCtl, ["-D", dataDirectory, "-m", "fast", "-w", "-t", "60", "stop"], asServerUser: true,
            workingDirectory: directory
        )
        guard result.status == 0 else {
            throw PostgresServerError.commandFailed(command: "pg_ctl stop", status: result.status, output: result.output + logTail())
        }
        state.withLock { $0.isRunning = false }
    }

    /// Kills the postmaster and every backend with SIGKILL, as a crash would, and waits until they are
    /// gone. The next `start()` recovers from the write-ahead log.
    public func kill() {
        guard let pid = postmasterPID() else {
            state.withLock { $0.isRunning = false }
            return
        }
        // pg_ctl starts the postmaster in a session of its own, so its process group is the postmaster
        // and its backends: one signal reaches them all, as a machine's crash would.
        _ = Glibc.kill(-pid, SIGKILL)
        _ = Glibc.kill(pid, SIGKILL)
        let deadline = ContinuousClock.now + .seconds(10)
        while Self.liveProcesses(inGroup: pid) > 0, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        // The dead postmaster may linger as a zombie until its new parent reaps it, and PostgreSQL takes a
        // lock file naming a process that still answers signals for a live server: the lock files go (the
        // data directory's and the socket's), the write-ahead log, which recovery reads, stays.
        try? FileManager.default.removeItem(atPath: dataDirectory + "/postmaster.pid")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: socketDirectory)) ?? [] where name.hasPrefix(".s.PGSQL.") {
            try? FileManager.default.removeItem(atPath: socketDirectory + "/" + name)
        }
        state.withLock { $0.isRunning = false }
    }

    /// A URL for TCP on 127.0.0.1, such as `postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres`: the
    /// superuser with its password unless another user (and password) is given. A nil password leaves it out.
    public func url(database: String = "postgres", user: String = PostgresServer.superuser, password: String? = nil) -> String {
        let secret = password ?? (user == Self.superuser ? superuserPassword : nil)
        let credentials = Self.percentEncoded(user) + (secret.map { ":" + Self.percentEncoded($0) } ?? "")
        return "postgres://\(credentials)@127.0.0.1:\(port)/\(Self.percentEncoded(database))"
    }

    /// The postmaster's process id, from its lock file while it runs.
    public func postmasterPID() -> pid_t? {
        guard let text = try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8),
            let first = text.split(separator: "\n").first
        else { return nil }
        return pid_t(first.trimmingCharacters(in: .whitespaces))
    }

    /// The last `lines` lines of the server's log.
    public func logTail(lines: Int = 30) -> String {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "(no log at \(logFile))"
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
