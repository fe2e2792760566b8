import EntitledTestSupport
import Foundation

extension PseudoTerminal {
    /// `entitlectl` on a new pseudo-terminal, connected to `server`, without colors or a history file, in
    /// the server's directory (so a file it writes, such as an export's, is removed with it).
    static func console(_ server: RunningEntitled, arguments: [String] = [], environment: [String: String] = [:]) throws -> PseudoTerminal {
        try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: ["--port", String(server.port), "--no-color"] + arguments,
            environment: [
                "TERM": "xterm", "HOME": server.directory.path, "ENTITLECTL_HISTFILE": "/dev/null",
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ].merging(environment) { $1 },
            currentDirectory: server.directory.path
        )
    }
}

/// The membership id in the first row of a membership table (the output of `grant`).
func firstMembershipID(in table: String) -> String {
    table.split(separator: "\n").dropFirst().first?.split(separator: " ").first.map(String.init) ?? ""
}
