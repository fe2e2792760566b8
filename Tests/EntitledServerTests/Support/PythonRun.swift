import Foundation

/// A Python program run to its end from the package root, with its standard output and error together:
/// how the suite runs the tools and clients written in Python against a real server.
struct PythonRun {
    let status: Int32
    let exitedNormally: Bool
    let output: String

    /// The package root: this file is Tests/EntitledServerTests/Support/PythonRun.swift.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `interpreter` (looked up on PATH unless a path) with `arguments`, with `environment` added to
    /// this process's.
    init(interpreter: String = "python3", _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [interpreter] + arguments
        process.currentDirectoryURL = Self.packageRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read before waiting, so that a full pipe cannot block the program.
        output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        status = process.terminationStatus
        exitedNormally = process.terminationReason == .exit
    }
}
