import EntitledTestSupport
import Foundation

/// Stripe's API as an import meets it: the stand-in (Fixtures/stripe_standin.py) serving subscription
/// objects, an API key file, and the options that point `entitled-stores` at them.
final class StripeImportStore {
    let standIn: StoreStandIn
    private let files: TemporaryDirectory
    /// `--stripe-*` options for `entitled-stores`.
    let arguments: [String]
    private var subscriptions: [[String: Any]] = []

    init() throws {
        standIn = try StoreStandIn("stripe_standin")
        files = try TemporaryDirectory()
        let keyFile = files.path + "/stripe.key"
        try "sk_test_standin\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        arguments = ["--stripe-api-key-file", keyFile, "--stripe-api-url", standIn.url]
    }

    /// Adds subscriptions to what the stand-in serves (one of the same id is replaced).
    func serve(_ added: [[String: Any]]) throws {
        let ids = Set(added.compactMap { $0["id"] as? String })
        subscriptions = subscriptions.filter { !ids.contains($0["id"] as? String ?? "") } + added
        try standIn.set(["subscriptions": subscriptions])
    }

    /// The API requests the stand-in answered since the last `resetCount()`.
    func requests() throws -> Int { try standIn.traffic().requests }

    func resetCount() throws { try standIn.set(["requests": 0, "request_times": [Double]()]) }

    /// A subscription object (https://docs.stripe.com/api/subscriptions/object) as API versions from
    /// 2025-03-31 write it: its period on its item. Times in Unix seconds.
    static func subscription(
        _ id: String, status: String = "active", customer: String = "cus_1", started: Int64, periodStart: Int64? = nil, periodEnd: Int64,
        user: String?, product: String = "prod_pro", cancelAtPeriodEnd: Bool = false, latestInvoice: String? = nil, created: Int64? = nil
    ) -> [String: Any] {
        var metadata: [String: Any] = [:]
        if let user { metadata["app_user_id"] = user }
        var object: [String: Any] = [
            "id": id, "object": "subscription", "customer": customer, "status": status, "livemode": false, "created": created ?? started,
            "start_date": started, "cancel_at_period_end": cancelAtPeriodEnd, "metadata": metadata,
            "latest_invoice": latestInvoice ?? "in_" + id.dropFirst(4),
            "items": [
                "object": "list",
                "data": [
                    [
                        "id": "si_" + id.dropFirst(4), "current_period_start": periodStart ?? (periodEnd - 30 * 86_400), "current_period_end": periodEnd,
                        "price": ["id": "price_1", "product": product],
                    ]
                ],
            ],
        ]
        if status == "canceled" { object["ended_at"] = min(periodEnd, Int64(Date().timeIntervalSince1970)) }
        return object
    }
}
