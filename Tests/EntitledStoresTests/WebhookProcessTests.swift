import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-stores serve --webhooks FILE` as it runs in production: real `entitled`, real
/// `entitled-stores` processes (killed with SIGKILL where a crash is claimed harmless), real receivers
/// (Fixtures/webhook_receiver.py, verifying every signature). Each test ends with every change delivered,
/// in order per subject.
@Suite("Webhooks from entitled-stores", .serialized)
struct WebhookProcessTests {
    static let secret = WebhookDeliveryTests.secret
    static let adminToken = "webhook-admin-token-0123456789"

    /// Writes the webhooks file (and its admin token file) for `endpoints` (name, url, extra keys).
    static func webhooksFile(in directory: TemporaryDirectory, endpoints: [(String, String, [String: Any])]) throws -> String {
        let tokenPath = directory.path + "/admin.token"
        try (adminToken + "\n").write(toFile: tokenPath, atomically: true, encoding: .utf8)
        let list: [[String: Any]] = endpoints.map { name, url, extra in
            ["name": name, "url": url, "secrets": [secret], "start": "oldest"].merging(extra) { _, new in new }
        }
        let path = directory.path + "/webhooks.json"
        try JSONSerialization.data(withJSONObject: ["admin-token-file": tokenPath, "endpoints": list]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Grants `count` memberships over `users` users.
    static func grant(_ count: Int, users: Int, prefix: String, on port: Int) async throws {
        let writer = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: port))
        for index in 0..<count {
            let answer = try await writer.send(.grant(user: "\(prefix)\(index % users)", product: "prod_\(index % 3)"))
            #expect(answer.isOK, "\(answer.line)")
        }
        await writer.close()
    }

    /// The distinct messages `receiver` took, first occurrences in arrival order, waiting (at most 60 s)
    /// until there are `count`.
    static func distinctDeliveries(of receiver: StoreStandIn, atLeast count: Int) async throws -> [[String: Any]] {
        let deadline = ContinuousClock.now + .seconds(60)
        var distinct: [[String: Any]] = []
        repeat {
            var seen = Set<String>()
            distinct = (try receiver.state()["deliveries"] as? [[String: Any]] ?? []).filter { seen.insert($0["id"] as? String ?? "").inserted }
            if distinct.count >= count { return distinct }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        Issue.record("the receiver took \(distinct.count) distinct messages, not \(count)")
        return distinct
    }

    @Test func aSlowEndpointHoldsUpNoOtherAndAKilledDelivererLosesNothingOnItsRestart() async throws {
        let entitled = try RunningEntitled()
        let fast = try StoreStandIn("webhook_receiver")
        let slow = try StoreStandIn("webhook_receiver")
        for receiver in [fast, slow] { try receiver.set(["secrets": [Self.secret]]) }
        // 20 s a message: however slowly a loaded machine runs the fast endpoint's 40, the slow one cannot
        // have taken them all meanwhile (at 1.5 s a message, a full run once let it take all 40 first).
        try slow.set(["delay_ms": 20_000])
        let directory = try TemporaryDirectory()
        let file = try Self.webhooksFile(in: directory, endpoints: [("fast", fast.url + "/in", [:]), ("slow", slow.url + "/in", [:])])
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--webhooks", file])

        try await Self.grant(40, users: 2, prefix: "u", on: entitled.port)
        _ = try await Self.distinctDeliveries(of: fast, atLeast: 40)
        // Two subjects, 20 s a message, one at a time per subject: the slow endpoint cannot have taken
        // more than a few yet, and the fast one did not wait for it.
        let slowSoFar = try slow.state()["deliveries"] as? [[String: Any]] ?? []
        #expect(slowSoFar.count < 40, "\(slowSoFar.count)")

        // A crash of the deliverer in the middle of a batch: the restart goes on from its state file.
        try fast.set(["delay_ms": 30])
        try await Self.grant(60, users: 6, prefix: "v", on: entitled.port)
        try await Task.sleep(for: .milliseconds(300))
        stores.kill()
        try stores.restart()
        let taken = try await Self.distinctDeliveries(of: fast, atLeast: 100)
        #expect(taken.count == 100)
        WebhookDeliveryTests.expectInOrderPerSubject(taken)
        #expect(try fast.state()["rejected"] as? Int == 0)
        _ = stores.stopAndReadLog()
    }

    @Test func aReceiverDownForAWhileGetsEverythingWhenItComesBack() async throws {
        let entitled = try RunningEntitled()
        var receiver: StoreStandIn? = try StoreStandIn("webhook_receiver")
        try receiver!.set(["secrets": [Self.secret]])
        let port = receiver!.port
        let directory = try TemporaryDirectory()
        let file = try Self.webhooksFile(in: directory, endpoints: [("crm", receiver!.url + "/in", [:])])
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--webhooks", file])
        try await Self.grant(10, users: 3, prefix: "a", on: entitled.port)
        _ = try await Self.distinctDeliveries(of: receiver!, atLeast: 10)
        receiver = nil  // down: the process is killed
        try await Self.grant(20, users: 3, prefix: "b", on: entitled.port)
        try await Task.sleep(for: .seconds(2))
        let back = try StoreStandIn("webhook_receiver", arguments: ["--port", String(port)])
        try back.set(["secrets": [Self.secret]])
        // Everything since it went down (the retries' backoff starts at 5 s).
        let taken = try await Self.distinctDeliveries(of: back, atLeast: 20)
        #expect(Set(taken.compactMap { $0["user"] as? String }) == ["b0", "b1", "b2"])
        WebhookDeliveryTests.expectInOrderPerSubject(taken)
        _ = stores.stopAndReadLog()
    }

    @Test func theAdminRoutesShowTheEndpointsAndResumeOneThatAnswered410() async throws {
        let entitled = try RunningEntitled()
        let receiver = try StoreStandIn("webhook_receiver")
        try receiver.set(["secrets": [Self.secret], "fail_next": ["status": 410, "count": 1]])
        let directory = try TemporaryDirectory()
        let file = try Self.webhooksFile(in: directory, endpoints: [("crm", receiver.url + "/in", ["actions": ["grant"]])])
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--webhooks", file])
        try await Self.grant(5, users: 5, prefix: "c", on: entitled.port)

        #expect(try stores.get("/webhooks").status == 401)
        let bearer = ["Authorization": "Bearer \(Self.adminToken)"]
        var status: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(20)
        repeat {
            let reply = try stores.get("/webhooks", headers: bearer)
            #expect(reply.status == 200, "\(reply.body)")
            let endpoints = (try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])?["endpoints"] as? [[String: Any]]
            status = endpoints?.first ?? [:]
            if status["setAside"] != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        #expect((status["setAside"] as? [String: Any])?["reason"].map { "\($0)".contains("410") } == true, "\(status)")
        #expect(status["lag"] as? Int ?? 0 >= 1, "\(status)")
        #expect(try stores.get("/metrics").body.contains(#"entitled_stores_webhook_set_aside{endpoint="crm"} 1"#))

        let resumed = try stores.post("/webhooks/crm/resume", body: [], headers: bearer)
        #expect(resumed.status == 200, "\(resumed.body)")
        #expect(try stores.post("/webhooks/nobody/resume", body: [], headers: bearer).status == 404)
        let taken = try await Self.distinctDeliveries(of: receiver, atLeast: 5)
        #expect(taken.count == 5)
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_webhook_delivered_total{endpoint="crm"} 5"#), "\(metrics)")
        _ = stores.stopAndReadLog()
    }
}
