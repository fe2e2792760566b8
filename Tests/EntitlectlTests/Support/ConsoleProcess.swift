import EntitledTestSupport
import Foundation

/// `entitlectl` run to completion with standard input, output and error on pipes: one-shot and script
/// runs, as a shell script or a cron job would run it.
struct ConsoleRun {
    let status: Int32
    let standardOutput: String
    let standardError: String

    static var executableURL: URL { ServerProcess.builtExecutable(named: "entitlectl") }

    /// Runs `entitlectl arguments...` with `input` on standard input and no history file.
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> ConsoleRun {
        let process = Process()
        process.executableURL = executableURL
        process.arguments = arguments
        var fullEnvironment = ProcessInfo.processInfo.environment
        fullEnvironment["ENTITLECTL_HISTFILE"] = "/dev/null"
        // A token in the environment of whoever runs the tests must not authenticate these runs.
        fullEnvironment["ENTITLED_TOKEN"] = nil
        fullEnvironment.merge(environment) { $1 }
        process.environment = fullEnvironment
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a large output cannot fill a pipe and stall the child.
        let errors = ErrorCollector(stderr.fileHandleForReading)
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ConsoleRun(
            status: process.terminationStatus,
            standardOutput: String(decoding: output, as: UTF8.self),
            standardError: errors.text()
        )
    }
}

/// Reads a pipe to its end on a background thread.
private final class ErrorCollector: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var data = Data()

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func text() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }
}
