import Foundation

/// Making the cluster, starting the postmaster, and the small system calls around them.
extension PostgresServer {
    /// The settings every start gets unless `settings` replaces them.
    static let defaultSettings: [String: String] = [
        "listen_addresses": "127.0.0.1",
        "fsync": "off",
        "full_page_writes": "off",
        "logging_collector": "off",
        // Three nodes with their pools, the tests' psql and the migration tool fit in this with room.
        "max_connections": "200",
        // Small shared memory: several test servers may run at once on a small machine.
        "shared_buffers": "16MB",
    ]

    func initializeCluster() throws {
        let passwordFile = directory + "/superuser-password"
        try write(superuserPassword + "\n", to: passwordFile)
        defer { try? FileManager.default.removeItem(atPath: passwordFile) }
        let result = try installation.run(
            installation.initdb,
            [
                "-D", dataDirectory, "-U", Self.superuser, "--pwfile=\(passwordFile)", "--auth-local=trust",
                "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions",
            ],
            asServerUser: true, workingDirectory: directory
        )
        guard result.status == 0 else {
            throw PostgresServerError.commandFailed(command: "initdb", status: result.status, output: result.output)
        }
        try makeSocketDirectory()
    }

    /// The directory of the server's Unix socket, outside the data directory: a base backup of this server
    /// would otherwise carry its socket's lock file into a standby's data.
    func makeSocketDirectory() throws {
        try FileManager.default.createDirectory(atPath: socketDirectory, withIntermediateDirectories: false)
        try handToServerUser(socketDirectory)
    }

    /// Starts the postmaster through `pg_ctl -w`, which returns once the server accepts connections.
    func startServer(port: Int) throws {
        let options = Self.defaultSettings.merging(settings) { $1 }
            .sorted { $0.key < $1.key }
            .map { "-c \(Self.shellQuoted("\($0.key)=\($0.value)"))" }
        let serverOptions = (["-p \(port)", "-k \(Self.shellQuoted(socketDirectory))"] + options).joined(separator: " ")
        let result = try installation.run(
            installation.pgCtl,
            ["-D", dataDirectory, "-l", logFile, "-w", "-t", "60", "-o", serverOptions, "start"],
            asServerUser: true, workingDirectory: directory
        )
        guard result.status == 0 else {
            // pg_ctl gave up: make sure no half-started postmaster stays behind holding the directory.
            if let pid = postmasterPID() { _ = Glibc.kill(-pid, SIGKILL) }
            throw PostgresServerError.startFailed(port: port, logTail: result.output + "\n" + logTail())
        }
        state.withLock {
            $0.port = port
            $0.isRunning = true
        }
    }

    /// A fresh directory owned by `owner` (the server's user when running as root), mode 0700.
    ///
    /// As root it is made under /tmp, whatever TMPDIR says, since the `postgres` user must reach it
    /// (root's own temporary directory may be private to root).
    static func makeDirectory(owner: PostgresInstallation.ServerUser?) throws -> String {
        let parent = owner == nil ? NSTemporaryDirectory() : "/tmp"
        var template = Array((parent + "/entitled-pg-XXXXXX").utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw PostgresServerError.directoryFailed(path: parent, reason: String(cString: strerror(errno)))
        }
        let path = URL(fileURLWithPath: String(cString: created)).standardizedFileURL.path
        if let owner, chown(path, owner.uid, owner.gid) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: path)
            throw PostgresServerError.directoryFailed(path: path, reason: "chown to \(owner.name): \(reason)")
        }
        return path
    }

    /// Gives a file or directory this process made to the server's user (a no-op without one).
    func handToServerUser(_ path: String) throws {
        guard let owner = installation.serverUser else { return }
        guard chown(path, owner.uid, owner.gid) == 0 else {
            throw PostgresServerError.directoryFailed(path: path, reason: "chown to \(owner.name): \(String(cString: strerror(errno)))")
        }
    }

    func write(_ text: String, to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw PostgresServerError.directoryFailed(path: path, reason: "cannot write the file")
        }
        try handToServerUser(path)
    }

    /// A TCP port on 127.0.0.1 nobody listens on now: the kernel's pick for a socket bound to port 0.
    static func freeLoopbackPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else {
            throw PostgresServerError.directoryFailed(path: "127.0.0.1:0", reason: "socket: \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            throw PostgresServerError.directoryFailed(path: "127.0.0.1:0", reason: "bind: \(String(cString: strerror(errno)))")
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// How many processes of process group `group` are alive (zombies, which hold nothing, are not).
    static func liveProcesses(inGroup group: pid_t) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.lazy.filter { $0.first?.isNumber == true }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let afterName = stat.range(of: ") ", options: .backwards)
            else { return false }
            // After "pid (name) ": state, ppid, pgrp, ...
            let fields = stat[afterName.upperBound...].split(separator: " ")
            return fields.count > 2 && fields[0] != "Z" && pid_t(fields[2]) == group
        }.count
    }

    static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
