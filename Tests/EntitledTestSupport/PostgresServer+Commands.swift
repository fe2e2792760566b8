import Foundation

extension PostgresInstallation {
    /// What a program printed (standard output and error together) and how it exited.
    struct CommandResult {
        let status: Int32
        let output: String
    }

    /// Runs `executable` to completion, as the server's user when `asServerUser` (and there is one), in
    /// `workingDirectory`.
    ///
    /// Spawned with posix_spawn rather than Foundation's Process: Process learns that a child exited when
    /// a socket it hands the child closes, and `pg_ctl start` leaves the postmaster, which inherits that
    /// socket, running: `waitUntilExit` would wait for the database to stop. Here the child gets standard
    /// input, output and error and nothing else (`closefrom(3)`), so neither the postmaster nor anything
    /// it starts holds a descriptor of the test process, and no signal blocked or ignored by the test
    /// runner's threads.
    ///
    /// The environment's `PG*` variables are dropped, so that a developer's PGHOST, PGPORT or PGPASSWORD
    /// cannot send a test's psql elsewhere; the C locale keeps the programs' messages the ones tests read.
    func run(_ executable: String, _ arguments: [String], asServerUser: Bool, workingDirectory: String) throws -> CommandResult {
        let command = (asServerUser ? serverUser?.prefix ?? [] : []) + [executable] + arguments
        let environment = ProcessInfo.processInfo.environment
            .filter { !$0.key.hasPrefix("PG") && !$0.key.hasPrefix("LC_") }
            .merging(["LC_ALL": "C", "LANG": "C"]) { $1 }
            .map { "\($0.key)=\($0.value)" }
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else {
            throw PostgresServerError.commandFailed(command: command[0], status: -1, output: "pipe: \(String(cString: strerror(errno)))")
        }
        // Not inherited by the children other tests spawn meanwhile (dup2 clears it on the child's copies).
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        guard let addChdir = Self.addChdir, let addClosefrom = Self.addClosefrom else {
            throw PostgresServerError.commandFailed(
                command: command[0], status: -1, output: "this C library lacks posix_spawn_file_actions_addchdir_np or _addclosefrom_np (glibc 2.34 or later has them)"
            )
        }
        _ = addChdir(&actions, workingDirectory)
        _ = addClosefrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let spawned = Self.withCStrings(command) { argv in
            Self.withCStrings(environment) { envp in
                posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
            }
        }
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else {
            throw PostgresServerError.commandFailed(
                command: command.joined(separator: " "), status: -1, output: "cannot start it: \(String(cString: strerror(spawned)))"
            )
        }
        // Read before waiting: a program that fills the pipe would otherwise never exit.
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(pipe[0], $0.baseAddress, $0.count) }
            if count > 0 {
                output += chunk[..<count]
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, which Swift does not import (macros): a signal's death is 128 + signal.
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return CommandResult(status: exitStatus, output: String(decoding: output, as: UTF8.self))
    }

    // glibc's GNU extensions (2.29, 2.34), which Swift's Glibc module does not declare (no _GNU_SOURCE).
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addChdir: AddChdir? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChdir.self) }
    private static let addClosefrom: AddClosefrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: AddClosefrom.self) }

    /// `strings` as a NULL-terminated array of C strings, for `body`'s duration.
    private static func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return body(pointers)
    }
}
