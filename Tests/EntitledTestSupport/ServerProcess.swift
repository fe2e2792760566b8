import Foundation

/// The real `entitled` executable, started as a child process, for tests of the command line, startup
/// and signals. The binary is the one `swift build` put beside this test bundle.
public final class ServerProcess {
    public let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    /// The line the server printed when it was ready.
    public private(set) var readyLine = ""

    public static var executableURL: URL { builtExecutable(named: "entitled") }

    /// An executable of this package, from the build products folder the test runner lives in (the
    /// package's executables are built there too).
    public static func builtExecutable(named name: String) -> URL {
        let runner = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return runner.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Runs the built executable `name` with `arguments` to its end: its exit status, and what it wrote to
    /// standard output and standard error together (the tools' output as a person sees it).
    public static func runToCompletion(_ name: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = builtExecutable(named: name)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// - Parameter environment: `ENTITLED_*` variables for the server. Those of the test runner's own
    ///   environment are not passed on, so that a developer's `ENTITLED_CONFIG` or `ENTITLED_PORT` cannot
    ///   change what a test starts; everything else is inherited.
    /// - Parameter unblockedSignals: start the server with no signal blocked, as a service manager does.
    ///   The test runner's threads block nearly every signal and a child inherits the mask of the thread
    ///   that spawns it, so a SIGHUP sent to a server started plainly stays pending instead of acting: a
    ///   test of what a signal does would pass whatever the server did. The server is then exec'd by a
    ///   few lines of Python that clear the mask first (same process, same pid).
    /// - Parameter executable: the package's executable to run (`entitled-stores` for the receiver).
    /// - Parameter addressSpaceKiB: run the server under this address-space limit, in KiB (`ulimit -v`,
    ///   set by a shell that then `exec`s the server: same process).
    public init(
        arguments: [String], workingDirectory: String, environment: [String: String] = [:], unblockedSignals: Bool = false,
        executable: String = "entitled", addressSpaceKiB: Int? = nil
    ) {
        if let addressSpaceKiB {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(addressSpaceKiB) && exec \"$0\" \"$@\"", Self.builtExecutable(named: executable).path] + arguments
        } else if executable != "entitled" {
            process.executableURL = Self.builtExecutable(named: executable)
            process.arguments = arguments
        } else if unblockedSignals {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
                Self.executableURL.path,
            ] + arguments
        } else {
            process.executableURL = Self.executableURL
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment
            .filter { !$0.key.hasPrefix("ENTITLED_") }
            .merging(environment) { $1 }
        process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory)
        process.standardOutput = output
        process.standardError = errors
    }

    /// Starts the process and waits for its ready line; returns the TCP port it names, if any.
    @discardableResult
    public func startAndWaitUntilReady(timeout: Duration = .seconds(30)) throws -> Int? {
        try start()
        return try waitUntilReady(timeout: timeout)
    }

    /// Starts the process without waiting, for a test that acts while it starts (signals during recovery).
    public func start() throws {
        try process.run()
    }

    /// Waits for the ready line of a process `start()` started; returns the TCP port it names, if any.
    @discardableResult
    public func waitUntilReady(timeout: Duration = .seconds(30)) throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        var collected = Data()
        let handle = output.fileHandleForReading
        while !collected.contains(UInt8(ascii: "\n")) {
            guard ContinuousClock.now < deadline, process.isRunning || !collected.isEmpty else {
                throw TestSupportFailure(
                    description: "entitled did not become ready; stderr: \(standardErrorText())"
                )
            }
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            collected.append(chunk)
        }
        readyLine = String(decoding: collected, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        guard let match = readyLine.firstMatch(of: /tcp (?:127\.0\.0\.1|0\.0\.0\.0):(\d+)/) else { return nil }
        return Int(match.1)
    }

    /// Sends `signal` without waiting (SIGHUP: read the auth file again).
    public func signal(_ signal: Int32) {
        guard process.processIdentifier > 0 else { return }
        kill(process.processIdentifier, signal)
    }

    /// Sends `signal` and waits for the process to exit; returns its exit status.
    public func stop(with signal: Int32 = SIGTERM) -> Int32 {
        // A process never started has pid 0, and kill(0, ...) signals the whole process group: the test
        // runner itself.
        guard process.processIdentifier > 0 else { return -1 }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs to completion (for invocations that exit by themselves) and returns the exit status.
    public func runToExit() throws -> Int32 {
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// What `waitForStandardError(containing:)` has read so far, given back by `standardErrorText()`.
    private var errorsRead = Data()

    /// Reads standard error while the process runs until it holds `text` (or `timeout` passes); returns
    /// whether it does. For a test that must know the server did something it only logs (a reload).
    public func waitForStandardError(containing text: String, timeout: Duration = .seconds(30)) -> Bool {
        let descriptor = errors.fileHandleForReading.fileDescriptor
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while ContinuousClock.now < deadline {
            if String(decoding: errorsRead, as: UTF8.self).contains(text) { return true }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                errorsRead.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                break  // the process closed it: it has exited
            } else {
                usleep(10_000)
            }
        }
        return String(decoding: errorsRead, as: UTF8.self).contains(text)
    }

    /// What `waitForStandardError` has read of standard error so far, without waiting for more (the
    /// process may still be running).
    public func standardErrorReadSoFar() -> String {
        String(decoding: errorsRead, as: UTF8.self)
    }

    /// All of standard error: waits for the process to close it (to exit).
    public func standardErrorText() -> String {
        String(decoding: errorsRead + errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    public func standardOutputText() -> String {
        String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        // Killed, not waited for: Foundation learns of a child's exit through a descriptor that children
        // started after it inherit, so waiting here could last until an unrelated, later server exits
        // (seen with the cluster tests' several nodes). Foundation reaps it in the background.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
    }
}
