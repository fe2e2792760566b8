import Foundation

/// A real `entitled` process on a free TCP port (and optionally a Unix socket), with its data directory
/// in a fresh temporary directory; it can be stopped and started again on the same port and data.
public final class RunningEntitled {
    public let directory: TemporaryDirectory
    public private(set) var port: Int = 0
    /// The Unix socket's path, when one was asked for.
    public let socketPath: String?
    /// The auth file, when the server was given tokens.
    public let authFilePath: String?
    /// Options added to every start, such as `["--idle-timeout", "1"]`.
    private let extraArguments: [String]
    private var process: ServerProcess?

    /// - Parameters:
    ///   - tokens: when not empty, the server requires authentication with these (`--auth`).
    ///   - arguments: further options of `entitled`, given at every start.
    public init(unixSocket: Bool = false, tokens: [AuthFileEntry] = [], arguments: [String] = []) throws {
        directory = try TemporaryDirectory()
        socketPath = unixSocket ? directory.path + "/entitled.sock" : nil
        if tokens.isEmpty {
            authFilePath = nil
        } else {
            let path = directory.path + "/auth.json"
            try AuthFileEntry.writeAuthFile(tokens, to: path)
            authFilePath = path
        }
        extraArguments = arguments
        try start(port: 0)
    }

    /// Stops the server gracefully (SIGTERM) and waits for it; returns its exit status.
    @discardableResult
    public func stop() -> Int32 {
        defer { process = nil }
        return process?.stop() ?? 0
    }

    /// Kills the server with SIGKILL, as a crash would, and waits for it.
    public func kill() {
        defer { process = nil }
        _ = process?.stop(with: SIGKILL)
    }

    /// What it logged (stopping it first).
    public func stopAndReadLog() -> String {
        guard let process else { return "" }
        _ = process.stop()
        self.process = nil
        return process.standardErrorText()
    }

    /// The server's process id (0 when stopped).
    public var processIdentifier: Int32 { process?.process.processIdentifier ?? 0 }

    /// Asks the server to read its auth file again (SIGHUP, as `systemctl reload` does); returns at once.
    public func reload() {
        process?.signal(SIGHUP)
    }

    /// Starts it again on the port it had, with the data it had.
    public func restart() throws {
        stop()
        try start(port: port)
    }

    private func start(port requested: Int) throws {
        var arguments = ["--port", String(requested), "--log-level", "warning"]
        if let socketPath { arguments += ["--socket", socketPath] }
        if let authFilePath { arguments += ["--auth", authFilePath] }
        arguments += extraArguments
        let process = ServerProcess(arguments: arguments, workingDirectory: directory.path)
        guard let bound = try process.startAndWaitUntilReady() else {
            throw TestSupportFailure(description: "entitled printed no TCP port: \(process.readyLine)")
        }
        port = bound
        self.process = process
    }
}
