import EntitledTestSupport
import Foundation

/// A stand-in for a store's API, a Python script of Fixtures/ written from the store's documentation, as a
/// child process on a free loopback port: `google_standin.py` (Google's OAuth, Play Developer API and
/// signing keys), `stripe_standin.py` (Stripe's invoice payments, subscriptions and events),
/// `appstore_standin.py` (the App Store Server API, one environment a process). The failures a test asks
/// for and the traffic counted are `standin_faults.py`'s.
final class StoreStandIn {
    private let script: ListeningScript
    var port: Int { script.port }

    /// - Parameter arguments: the script's own (the webhook receiver's `--port`).
    init(_ name: String, arguments: [String] = []) throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name).py").path
        script = try ListeningScript(program: Self.python(for: name), arguments: [path] + arguments, name: "the stand-in \(name)")
    }

    /// The Python a stand-in runs on: the webhook receiver on the one with `standardwebhooks` when Tools/test.sh
    /// installed it (`ENTITLED_WEBHOOK_PYTHON`), the App Store's on one with `cryptography`.
    static func python(for name: String) -> String {
        switch name {
        case "appstore_standin": return pythonWithCryptography
        case "webhook_receiver": return ProcessInfo.processInfo.environment["ENTITLED_WEBHOOK_PYTHON"] ?? "python3"
        default: return "python3"
        }
    }

    /// The python3 on the PATH, or the system's when only it has the cryptography module (Debian's
    /// python3-cryptography, which Tools/test.sh installs where no python3 has it).
    static let pythonWithCryptography: String = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import cryptography"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return "/usr/bin/python3" }
        probe.waitUntilExit()
        return probe.terminationStatus == 0 ? "python3" : "/usr/bin/python3"
    }()

    var url: String { "http://127.0.0.1:\(port)" }

    /// Merges `values` into the stand-in's state (for Google: subscriptions, products, jwks, fail).
    func set(_ values: [String: Any]) throws {
        let body = try JSONSerialization.data(withJSONObject: values)
        _ = try HTTPReply.exchange(port: port, method: "POST", path: "/state", body: Array(body), headers: ["Content-Type": "application/json"])
    }

    /// The stand-in's state, with what it counted.
    func state() throws -> [String: Any] {
        let reply = try HTTPReply.exchange(port: port, method: "GET", path: "/state", body: [], headers: [:])
        return try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any] ?? [:]
    }

    /// The API requests counted (standin_faults): how many, when each arrived (seconds on the stand-in's
    /// monotonic clock), and the most in flight at once.
    func traffic() throws -> (requests: Int, arrivals: [Double], maxInFlight: Int) {
        let json = try state()
        return (json["requests"] as? Int ?? -1, json["request_times"] as? [Double] ?? [], json["max_in_flight"] as? Int ?? -1)
    }

    /// The next `count` API requests answered `status` (429, 500, "hang", "stall"), 429s with `retryAfter`.
    func failNext(_ count: Int, with status: Any, retryAfter: String? = nil, hangSeconds: Double = 30) throws {
        var plan: [String: Any] = ["status": status, "count": count, "hang_seconds": hangSeconds]
        if let retryAfter { plan["retry_after"] = retryAfter }
        try set(["fail_next": plan])
    }

    /// Google's: how many OAuth tokens were asked for, and the last assertion.
    func tokenRequests() throws -> (count: Int, assertion: String?) {
        let json = try state()
        return (json["token_requests"] as? Int ?? -1, json["last_assertion"] as? String)
    }
}

extension StoreStandIn {
    /// The App Store Server API's stand-in (`appstore_standin.py`) for `environment` (`Production`,
    /// `Sandbox`), accepting tokens of the key whose public half is `publicKeyPEM`.
    static func appStore(_ environment: String, publicKeyPEM: String, keyID: String, issuerID: String) throws -> StoreStandIn {
        let standIn = try StoreStandIn("appstore_standin")
        try standIn.set([
            "environment": environment, "bundle_id": AppleFixtures.bundleID, "key_id": keyID, "issuer_id": issuerID, "public_key": publicKeyPEM,
        ])
        return standIn
    }
}
