import EntitledTestSupport
import Foundation

extension RunningEntitled {
    /// A real server that requires authentication (`--auth`), knowing `AuthFileEntry.admin` and
    /// `AuthFileEntry.check`.
    static func requiringTokens(arguments: [String] = []) throws -> RunningEntitled {
        try RunningEntitled(tokens: [.admin, .check], arguments: arguments)
    }

    /// `--port PORT` for `entitlectl`.
    var portOption: [String] { ["--port", String(port)] }

    /// Writes `contents` to a file in the server's directory, readable by its owner only (as a token file
    /// should be), and returns its path.
    func writeFile(_ name: String, _ contents: String) throws -> String {
        let path = directory.path + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw TestSupportFailure(description: "cannot write \(path)")
        }
        return path
    }

    /// The actors of `subject`'s history, newest first, as an admin sees them: whose token made each change.
    func actors(of subject: String) throws -> [String] {
        let history = try ConsoleRun.run(portOption + ["--json", "history", subject], environment: ["ENTITLED_TOKEN": AuthFileEntry.admin.token])
        return history.standardOutput.matches(of: /"actor":"([^"]*)"/).map { String($0.1) }
    }
}
