import Foundation

/// A script run as a child process (`/usr/bin/env PROGRAM ARGUMENTS...`) that serves on a free loopback
/// port and says `listening on PORT` on its first line: the stores' stand-ins, the webhook receiver, a
/// test's own small server. Killed when released.
public final class ListeningScript {
    public let process = Process()
    public private(set) var port = 0

    /// Starts `program arguments...` and waits for its `listening on PORT` line.
    /// - Throws: `TestSupportFailure` naming `name` and what it printed, when it said no port.
    public init(program: String, arguments: [String], name: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let match = String(decoding: line, as: UTF8.self).firstMatch(of: /listening on (\d+)/), let port = Int(match.1) else {
            throw TestSupportFailure(description: "\(name) did not start: \(String(decoding: line, as: UTF8.self))")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: a child of the test runner inherits its blocked signals, SIGTERM included (a script may
        // clear its mask too, but a kill cannot be blocked at all).
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
