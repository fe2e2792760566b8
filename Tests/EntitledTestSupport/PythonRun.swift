import Foundation
import Testing

/// A Python program run to its end from the package root, with its standard output and error together:
/// how the suite runs the tools and clients written in Python against a real server.
public struct PythonRun {
    public let status: Int32
    public let exitedNormally: Bool
    public let output: String

    /// The package root: this file is Tests/EntitledTestSupport/PythonRun.swift.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `interpreter` (looked up on PATH unless a path) with `arguments`, with `environment` added to
    /// this process's.
    public init(interpreter: String = "python3", _ arguments: [String], environment: [String: String] = [:]) throws {
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

    /// The first Python that can import `jsonschema`: the one on PATH, else the system's, where .ci/run
    /// installs Debian's python3-jsonschema. Without either the calling test fails, naming what to install.
    public static func interpreterWithJSONSchema() -> String {
        for candidate in ["python3", "/usr/bin/python3"] {
            if let probe = try? PythonRun(interpreter: candidate, ["-c", "import jsonschema"]), probe.status == 0 { return candidate }
        }
        Issue.record("no python3 can import jsonschema: install Debian's python3-jsonschema (apt-get install -y python3-jsonschema)")
        return "python3"
    }
}
