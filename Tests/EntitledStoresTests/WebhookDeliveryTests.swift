import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Logging
import Testing

/// Outgoing webhooks (`EndpointDelivery`) end to end: a real `entitled` whose change feed is read, and a
/// real HTTP receiver (Fixtures/webhook_receiver.py) that verifies every signature (with the
/// `standardwebhooks` package when it is installed, else with the specification's algorithm) and fails,
/// throttles, answers 410 or goes slow as a test asks. Each test ends with every change delivered, in order
/// per subject, under the ids the feed gives.
@Suite("Outgoing webhooks", .serialized)
struct WebhookDeliveryTests {
    static let secret = "whsec_" + Data("entitled webhook test secret 1".utf8).base64EncodedString()
    static let newSecret = "whsec_" + Data("entitled webhook test secret 2".utf8).base64EncodedString()

    /// A server, a receiver, a state directory, and a writer connection.
    final class Harness {
        let server: RunningEntitled
        let receiver: StoreStandIn
        let directory: TemporaryDirectory
        let writer: EntitledAsyncConnection

        init() async throws {
            server = try RunningEntitled()
            receiver = try StoreStandIn("webhook_receiver")
            directory = try TemporaryDirectory()
            try receiver.set(["secrets": [WebhookDeliveryTests.secret]])
            writer = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        }

        func endpoint(secrets: [String] = [WebhookDeliveryTests.secret], retryPeriod: Duration = .seconds(3600)) -> WebhookEndpoint {
            WebhookEndpoint(name: "crm", url: receiver.url + "/hooks", secrets: secrets, concurrency: 8, retryPeriod: retryPeriod)
        }

        /// A deliverer of `endpoint` from the state file (cursor 0 on the first run), paced for tests.
        func delivery(_ endpoint: WebhookEndpoint) throws -> EndpointDelivery {
            let file = WebhookStateFile(directory: directory.path, endpoint: endpoint.name)
            var tuning = EndpointDelivery.Tuning()
            tuning.initialBackoff = .milliseconds(50)
            tuning.maximumBackoff = .milliseconds(400)
            tuning.feedWait = 300
            tuning.persistInterval = .milliseconds(20)
            return EndpointDelivery(
                endpoint: endpoint, feed: ServerWebhookFeed(address: .tcp(host: "127.0.0.1", port: server.port), token: nil),
                transport: HTTPWebhookTransport(), stateFile: file, state: try file.read() ?? WebhookEndpointState(cursor: 0),
                logger: Logger(label: "webhook-test"), tuning: tuning
            )
        }

        /// Grants `count` memberships over `users` users, round robin; returns the change numbers.
        @discardableResult
        func grant(_ count: Int, users: Int = 5, prefix: String = "u") async throws -> [UInt64] {
            var sequences: [UInt64] = []
            for index in 0..<count {
                let answer = try await writer.granting(.grant(user: "\(prefix)\(index % users)", product: "prod_\(index % 3)"))
                sequences.append(try #require(answer.sequence))
            }
            return sequences
        }

        /// What the receiver took.
        func deliveries() throws -> [[String: Any]] {
            try receiver.state()["deliveries"] as? [[String: Any]] ?? []
        }

        /// Waits (at most 60 s) until the receiver took `count` distinct messages.
        func waitForDeliveries(_ count: Int) async throws -> [[String: Any]] {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let taken = try deliveries()
                if Set(taken.compactMap { $0["id"] as? String }).count >= count { return taken }
                try await Task.sleep(for: .milliseconds(50))
            }
            let taken = try deliveries()
            Issue.record("the receiver took \(taken.count) messages, not \(count)")
            return taken
        }
    }

    /// Every subject's messages came in the feed's order, every one verified (by `standardwebhooks` when
    /// Tools/test.sh installed it), under its change's id.
    static func expectInOrderPerSubject(_ deliveries: [[String: Any]], sourceLocation: SourceLocation = #_sourceLocation) {
        var lastByUser: [String: Int] = [:]
        let requireLibrary = ProcessInfo.processInfo.environment["ENTITLED_REQUIRE_STANDARDWEBHOOKS"] == "1"
        for delivery in deliveries {
            if requireLibrary {
                #expect((delivery["verifier"] as? String)?.hasPrefix("standardwebhooks") == true, "\(delivery)", sourceLocation: sourceLocation)
            }
            let user = delivery["user"] as? String ?? "-"
            let sequence = delivery["sequence"] as? Int ?? -1
            #expect(sequence > (lastByUser[user] ?? 0), "user \(user): change \(sequence) after \(lastByUser[user] ?? 0)", sourceLocation: sourceLocation)
            lastByUser[user] = max(lastByUser[user] ?? 0, sequence)
            #expect((delivery["id"] as? String)?.hasPrefix("msg_\(sequence)_") == true, sourceLocation: sourceLocation)
        }
    }

    @Test func everyChangeIsDeliveredSignedAndInOrderPerSubjectThroughFailuresAndDroppedConnections() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["fail_next": ["status": 500, "count": 6]])
        let delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        try await harness.grant(60)
        try harness.receiver.set(["fail_next": ["status": "close", "count": 3]])
        try await harness.grant(40)
        let taken = try await harness.waitForDeliveries(100)
        Self.expectInOrderPerSubject(taken)
        #expect(taken.count == 100, "failed tries are not deliveries, so nothing came twice")
        #expect(try harness.receiver.state()["rejected"] as? Int == 0)
        let status = await delivery.status()
        // Six 500s at least were tried again (a dropped connection may be retried by the HTTP client itself).
        #expect(status.counters.delivered == 100 && status.counters.retried >= 6, "\(status.counters)")
        #expect(try harness.receiver.state()["requests"] as? Int ?? 0 >= 106)
        await delivery.stop()
        #expect(try WebhookStateFile(directory: harness.directory.path, endpoint: "crm").read()?.cursor == 100)
    }

    @Test func anEndpointAnswering410IsSetAsideWithItsMessagesKeptUntilAnAdminResumesIt() async throws {
        let harness = try await Harness()
        let delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        try await harness.grant(5)
        _ = try await harness.waitForDeliveries(5)
        try harness.receiver.set(["fail_next": ["status": 410, "count": 1]])
        try await harness.grant(10)
        // Set aside: nothing more goes, and the lag says what waits.
        var status = await delivery.status()
        let deadline = ContinuousClock.now + .seconds(20)
        while status.setAside == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            status = await delivery.status()
        }
        #expect(status.setAside?.reason.contains("410") == true, "\(status)")
        // Messages already in flight when the 410 came may still land; then nothing more goes.
        try await Task.sleep(for: .milliseconds(300))
        let landed = try harness.deliveries().count
        try await Task.sleep(for: .milliseconds(500))
        #expect(try harness.deliveries().count == landed && landed < 15)
        #expect(await delivery.status().lag >= 1)
        // A restart keeps it set aside (the state file says so) until resumed.
        await delivery.stop()
        let restarted = try harness.delivery(harness.endpoint())
        await restarted.start()
        #expect(await restarted.status().setAside != nil)
        await restarted.resume()
        // What landed before the stop may come again (at least once), under the same ids.
        var seen = Set<String>()
        let taken = try await harness.waitForDeliveries(15).filter { seen.insert($0["id"] as? String ?? "").inserted }
        Self.expectInOrderPerSubject(taken)
        #expect(await restarted.status().setAside == nil)
        await restarted.stop()
    }

    @Test func a429WithRetryAfterHoldsTheWholeEndpointForThatLong() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["fail_next": ["status": 429, "count": 1, "retry_after": "2"]])
        let delivery = try harness.delivery(harness.endpoint())
        let started = ContinuousClock.now
        await delivery.start()
        try await harness.grant(10)
        let taken = try await harness.waitForDeliveries(10)
        // Retry-After is a lower bound on when the next try may come, not a timing of the machine.
        #expect(ContinuousClock.now - started >= .seconds(2))
        Self.expectInOrderPerSubject(taken)
        await delivery.stop()
    }

    @Test func aRestartedDelivererAndAKilledServerLoseNothingAndRepeatOnlyUnderTheSameIds() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["delay_ms": 20])
        var delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        try await harness.grant(30)
        _ = try await harness.waitForDeliveries(10)
        // The deliverer stops mid-way; the server is killed (kill -9) and started again on its data.
        await delivery.stop()
        harness.server.kill()
        try harness.server.restart()
        let writer = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: harness.server.port))
        for index in 0..<20 { _ = try await writer.granting(.grant(user: "v\(index % 4)", product: "prod_x")) }
        delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        let taken = try await harness.waitForDeliveries(50)
        let ids = taken.compactMap { $0["id"] as? String }
        #expect(Set(ids).count == 50)
        Self.expectInOrderPerSubject(taken.reduce(into: [[String: Any]]()) { unique, delivery in
            if !unique.contains(where: { $0["id"] as? String == delivery["id"] as? String }) { unique.append(delivery) }
        })
        await delivery.stop()
    }

    @Test func anEndpointGetsOnlyTheActionsProductsAndEntitlementsItsFilterNames() async throws {
        let harness = try await Harness()
        // Revocations of memberships of a product the entitlement "pro" names, by the catalog as it changes.
        var endpoint = harness.endpoint()
        endpoint.filter = WebhookFilter(actions: ["revoke"], entitlements: ["pro"])
        let delivery = try harness.delivery(endpoint)
        await delivery.start()
        _ = try await harness.writer.granting(.define(entitlement: "pro", products: ["prod_1"]))
        var ids: [String: String] = [:]
        for product in ["prod_0", "prod_1", "prod_2"] {
            let granted = try await harness.writer.granting(.grant(user: "f-\(product)", product: product))
            ids[product] = granted.membership?.id
        }
        for product in ["prod_0", "prod_1", "prod_2"] {
            _ = try await harness.writer.granting(.revoke(membership: ids[product]!))
        }
        // A define after the start widens the entitlement: the deliverer follows the catalog in the feed.
        _ = try await harness.writer.granting(.define(entitlement: "pro", products: ["prod_1", "prod_2"]))
        let late = try await harness.writer.granting(.grant(user: "late", product: "prod_2"))
        _ = try await harness.writer.granting(.revoke(membership: late.membership!.id))
        let taken = try await harness.waitForDeliveries(2)
        try await Task.sleep(for: .milliseconds(500))
        let all = try harness.deliveries()
        #expect(all.count == 2, "\(all)")
        #expect(all.map { $0["membership"] as? String } == [ids["prod_1"], late.membership!.id])
        #expect(taken.allSatisfy { $0["type"] as? String == "membership.revoke" })
        await delivery.stop()
    }

    @Test func anEndpointsConcurrencyIsWhatReachesTheReceiverBeyondTheHTTPClientsDefaultOfEight() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["delay_ms": 300])
        var endpoint = harness.endpoint()
        endpoint.concurrency = 16
        let delivery = try harness.delivery(endpoint)
        await delivery.start()
        try await harness.grant(32, users: 32)
        _ = try await harness.waitForDeliveries(32)
        let most = try harness.receiver.state()["max_in_flight"] as? Int ?? 0
        #expect(most > 8 && most <= 16, "at most \(most) messages in flight at the receiver")
        await delivery.stop()
    }

    @Test func aMessageWaitingForItsNextTryLeavesTheFeedAloneUntilThen() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["fail_user": "stuck"])
        let delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        _ = try await harness.writer.granting(.grant(user: "stuck", product: "prod_a"))
        func changesRead() async throws -> Int {
            try await harness.writer.send(.init(op: "stats"))["requests"]?["byOp"]?["changes"]?.intValue ?? 0
        }
        try await Task.sleep(for: .seconds(1))
        let before = try await changesRead()
        try await Task.sleep(for: .seconds(1))
        // Caught up, the deliverer waits on the feed (300 ms a read in this test) while the message waits
        // for its backoff: a few reads a second, not one after another.
        let reads = try await changesRead() - before
        #expect(reads < 20, "\(reads) reads of the feed in a second")
        #expect(await delivery.status().counters.retried >= 2, "the message was tried again meanwhile")
        await delivery.stop()
    }

    @Test func aRedirectIsAFailureNotFollowedAndTheMessageIsTriedAgain() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["fail_next": ["status": 301, "count": 2]])
        let delivery = try harness.delivery(harness.endpoint())
        await delivery.start()
        try await harness.grant(3, users: 1)
        let taken = try await harness.waitForDeliveries(3)
        // A followed redirect would have come back as a GET the receiver does not count; the POSTs were tried again.
        let requests = try harness.receiver.state()["requests"] as? Int ?? 0
        #expect(taken.count == 3 && requests == 5)
        #expect(await delivery.status().counters.retried == 2)
        await delivery.stop()
    }

    @Test func anErasurePassesAProductFilterSoThatACopyLearnsWhatToDelete() async throws {
        let harness = try await Harness()
        var endpoint = harness.endpoint()
        endpoint.filter = WebhookFilter(products: ["prod_1"])
        let delivery = try harness.delivery(endpoint)
        await delivery.start()
        let kept = try await harness.writer.granting(.grant(user: "erin", product: "prod_1"))
        _ = try await harness.writer.granting(.grant(user: "erin", product: "prod_2"))
        // Delivered before the erasure: an erasure takes the person's earlier items out of the feed at once
        // (PROTOCOL.md, changes), so a grant the deliverer had not read yet would never be sent.
        _ = try await harness.waitForDeliveries(1)
        _ = try await harness.writer.granting(.erase(user: "erin"))
        let taken = try await harness.waitForDeliveries(2)
        #expect(taken.map { $0["type"] as? String } == ["membership.grant", "person.erase"], "\(taken)")
        #expect(taken.first?["membership"] as? String == kept.membership?.id)
        await delivery.stop()
    }

    @Test func duringASecretRotationEveryMessageCarriesASignatureOfEachSecret() async throws {
        let harness = try await Harness()
        let delivery = try harness.delivery(harness.endpoint(secrets: [Self.newSecret, Self.secret]))
        await delivery.start()
        try await harness.grant(5)
        _ = try await harness.waitForDeliveries(5)
        // The receiver moves to the new secret only: the messages still verify.
        try harness.receiver.set(["secrets": [Self.newSecret]])
        try await harness.grant(5)
        let taken = try await harness.waitForDeliveries(10)
        #expect(try harness.receiver.state()["rejected"] as? Int == 0)
        #expect(taken.count == 10)
        await delivery.stop()
    }

    @Test func aMessageOneSubjectCannotTakeIsGivenUpAfterTheRetryPeriodWhileOthersGoOnAndIsRedeliveredByAnAdmin() async throws {
        let harness = try await Harness()
        try harness.receiver.set(["fail_user": "stuck"])
        let delivery = try harness.delivery(harness.endpoint(retryPeriod: .seconds(1)))
        await delivery.start()
        let stuck = try await harness.writer.granting(.grant(user: "stuck", product: "prod_a"))
        try await harness.grant(20)
        _ = try await harness.waitForDeliveries(20)
        var status = await delivery.status()
        let deadline = ContinuousClock.now + .seconds(20)
        while status.failed.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            status = await delivery.status()
        }
        let failed = try #require(status.failed.first)
        #expect(failed.sequence == stuck.sequence && failed.lastResult == "HTTP 500" && status.setAside == nil, "\(status)")
        try harness.receiver.set(["fail_user": NSNull()])
        let attempt = try await delivery.redeliver(failed.id)
        #expect(attempt == .delivered(status: 204))
        #expect(await delivery.status().failed.isEmpty)
        #expect(try harness.deliveries().contains { $0["id"] as? String == failed.id })
        await delivery.stop()
    }
}

extension EntitledAsyncConnection {
    /// Sends `request` and returns its answer, failing the test on an error answer.
    fileprivate func granting(_ request: EntitledRequest) async throws -> EntitledResponse {
        let answer = try await send(request)
        guard answer.isOK else { throw TestSupportFailure(description: "\(request.op) refused: \(answer.line)") }
        return answer
    }
}
