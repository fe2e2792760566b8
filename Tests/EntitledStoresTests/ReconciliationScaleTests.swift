import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// A reconciliation of thousands of memberships of one source, read from `entitled` a page at a time
/// (the reconciler's pages of 200, among memberships of another source): every one is asked of its store
/// exactly once, and those that differ are corrected.
// One test at a time: each runs entitled, entitled-stores and stand-ins, and the suites' tests all at once
// starved the rest of the full run (timing tests elsewhere ran out of time).
@Suite(.serialized) struct ReconciliationScaleTests {
    @Test func thousandsOfMembershipsAreEachCheckedExactlyOnceThroughManyPages() async throws {
        let sync = try StoreSyncHarness([.stripe], entitledArguments: ["--fsync", "no"])
        let count = 2500
        let now = StripeFixtures.now
        var subscriptions: [[String: Any]] = []
        for index in 0..<count {
            let id = "sub_\(index)"
            let response = try sync.client.send(
                .grant(
                    user: "u\(index)", product: "prod_pro", source: "stripe", expiresAt: ProtocolTime.string(milliseconds: (now + 86_400) * 1000),
                    willRenew: true, environment: "sandbox", transactionId: "in_\(index)_1", originalTransactionId: id
                )
            )
            #expect(response.error == nil)
            // Every fifth renewed since.
            let renewed = index % 5 == 0
            subscriptions.append(
                StoreSyncHarness.stripeSubscription(
                    id, user: "u\(index)", periodEnd: now + (renewed ? 31 : 1) * 86_400, invoice: "in_\(index)_\(renewed ? 2 : 1)"
                )
            )
            // Memberships of another source between them, which the listing passes over.
            if index % 10 == 0 { _ = try sync.client.send(.grant(user: "u\(index)", product: "prod_pro", source: "app_store", duration: "30d", transactionId: "\(9_000_000 + index)")) }
        }
        try sync.setStripe(all: subscriptions)

        let run = try await sync.run("reconcile", ["--concurrency", "16"], timeout: .seconds(600))
        #expect(run.status == 0, "\(run.output.suffix(2000))")
        #expect(run.output.contains("stripe: checked \(count), corrected \(count / 5), failed 0 (renewal \(count / 5))"), "\(run.output.suffix(2000))")
        let paths = try StoreSyncHarness.paths(sync.stripe)
        #expect(paths.count == count)
        let asked = Dictionary(grouping: paths, by: { $0 })
        #expect(asked.count == count, "asked twice: \(asked.filter { $0.value.count > 1 }.keys.prefix(5))")
        #expect((0..<count).allSatisfy { asked["GET /v1/subscriptions/sub_\($0)"] != nil })
        for index in stride(from: 0, to: count, by: 250) {
            #expect(try sync.membership(original: "sub_\(index)").renewsCount == (index % 5 == 0 ? 1 : 0))
        }
    }
}
