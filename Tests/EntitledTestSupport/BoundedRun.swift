import Foundation

/// One of the package's executables run to its end, but for at most a bounded time (a test of a hang must
/// not hang itself), and optionally under an address-space limit (`ulimit -v`, set by a shell that then
/// `exec`s it: same process). What it printed goes to a file, so that a child that writes much never
/// blocks on a full pipe.
public struct BoundedRun: Sendable {
    /// The exit status, or the signal that ended it (`endedBySignal`).
    public let status: Int32
    /// Whether a signal ended it (an abort is SIGABRT, 6; a shell reports it as exit status 134).
    public let endedBySignal: Bool
    /// Whether it was still running when the time was up (it was then killed).
    public let timedOut: Bool
    /// Standard output and standard error together.
    public let output: String

    /// Runs the built executable `name` with `arguments`; kills it after `timeout`.
    /// - Parameter addressSpaceKiB: the most address space the process may have, in KiB (`ulimit -v`).
    public static func run(
        _ name: String, _ arguments: [String], timeout: Duration, addressSpaceKiB: Int? = nil,
        workingDirectory: String? = nil
    ) throws -> BoundedRun {
        let executable = ServerProcess.builtExecutable(named: name).path
        let process = Process()
        if let addressSpaceKiB {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(addressSpaceKiB) && exec \"$0\" \"$@\"", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ENTITLED_") }
        let outputPath = NSTemporaryDirectory() + "/entitled-bounded-run-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: outputPath, contents: nil), let output = FileHandle(forWritingAtPath: outputPath) else {
            throw TestSupportFailure(description: "cannot create \(outputPath)")
        }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? output.close()
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                timedOut = true
                kill(process.processIdentifier, SIGKILL)
                break
            }
            usleep(20_000)
        }
        process.waitUntilExit()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return BoundedRun(
            status: process.terminationStatus, endedBySignal: process.terminationReason == .uncaughtSignal,
            timedOut: timedOut, output: text
        )
    }
}
