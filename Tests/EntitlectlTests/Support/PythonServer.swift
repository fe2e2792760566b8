import EntitledTestSupport
import Foundation

/// An HTTP server in Python as a child process on a free loopback port, which says `listening on PORT`
/// on its first line: the webhook receiver of EntitledStoresTests' fixtures (which this target cannot
/// reach as a class, only as a script), or a small script of a test's own. Killed when released.
final class PythonServer {
    private let script: ListeningScript
    var port: Int { script.port }

    /// The webhook receiver (Tests/EntitledStoresTests/Fixtures/webhook_receiver.py), verifying every
    /// signature with `secret`.
    static func webhookReceiver(secret: String) throws -> PythonServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("EntitledStoresTests/Fixtures/webhook_receiver.py")
        let python = ProcessInfo.processInfo.environment["ENTITLED_WEBHOOK_PYTHON"] ?? "python3"
        let receiver = try PythonServer(python: python, arguments: [script.path])
        try receiver.post("/state", json: ["secrets": [secret]])
        return receiver
    }

    /// Runs `python arguments...` (a script's path, or `-c` and its code).
    init(python: String = "python3", arguments: [String]) throws {
        script = try ListeningScript(program: python, arguments: arguments, name: "the Python server")
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Posts `json` to `path` (the receiver's settings: `/state`).
    func post(_ path: String, json: [String: Any]) throws {
        let body = try JSONSerialization.data(withJSONObject: json)
        _ = try HTTPReply.exchange(port: port, method: "POST", path: path, body: Array(body), headers: ["Content-Type": "application/json"])
    }

    /// The receiver's state: what it took (`deliveries`), what it refused.
    func state() throws -> [String: Any] {
        let reply = try HTTPReply.exchange(port: port, method: "GET", path: "/state", body: [], headers: [:])
        return try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any] ?? [:]
    }
}
