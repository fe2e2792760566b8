import ArgumentParser
import Crypto
import EntitledClient
import EntitledStores
import Foundation
import Logging

/// `entitled-stores backfill --since TIME`: applies what the stores say happened since then, through the
/// receivers, as if each notification had just arrived; what was applied before is recognised by its ids.
struct BackfillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backfill",
        abstract: "Apply what the stores say happened since a moment: the notifications a receiver may have missed.",
        discussion: """
            App Store: the notifications Apple sent since then (Get Notification History, at most 180 days back). \\
            Stripe: the events since then (List events, at most 30 days back), oldest first. Google Play, which keeps no history of \\
            its notifications: the purchases voided since then (at most 30 days back), then every Google Play \\
            membership brought to its purchase's state (a reconciliation). Each is applied as the receiver applies a \\
            delivery: one already applied changes nothing. A notification whose purchase no membership holds is kept \\
            in --state-dir, as the receiver keeps it, for serve to apply once a grant names it. Exit status 0, or 3 when \\
            some could not be applied (run it again).
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: "The moment from which to apply: a time such as 2026-11-28T00:00:00Z.")
    var since: String

    func run() async throws {
        guard let sinceMilliseconds = ProtocolTime.milliseconds(since) else {
            throw ValidationError("--since must be a time such as 2026-11-28T00:00:00Z, not \(since)")
        }
        let now = Date()
        let start = Date(timeIntervalSince1970: Double(sinceMilliseconds) / 1000)
        guard start < now else { throw ValidationError("--since \(since) is not in the past") }
        let settings = try options.settings()
        var logger = Logger(label: "entitled-stores")
        logger.logLevel = settings.logLevel
        let pool = settings.entitledPool(connections: 2)
        let gateway = PoolGateway(pool: pool)
        let clients = try StoreClients(settings: settings, gateway: gateway)
        guard clients.apple != nil || clients.google != nil || clients.stripe != nil else {
            throw ValidationError("no store's API is configured: give --apple-key-file (with its ids), --google-service-account or --stripe-api-key-file")
        }
        // Every store's reach is checked before any is asked: refused after another store's notifications
        // were applied, the run would stop half done and without its summary.
        let elapsed = now.timeIntervalSince(start)
        if clients.apple != nil, elapsed > Double(AppStoreServerAPI.notificationHistoryWindow(.production).components.seconds) {
            throw ValidationError("the App Store keeps 180 days of notification history: give a --since within them")
        }
        if clients.stripe != nil, elapsed > Double(StripeAPI.eventsWindow.components.seconds) {
            throw ValidationError("Stripe keeps 30 days of events: give a --since within them")
        }
        if clients.google != nil, elapsed > Double(GooglePlayAPI.voidedPurchasesWindow.components.seconds) {
            throw ValidationError("Google Play lists 30 days of voided purchases: give a --since within them")
        }
        let unmatched: UnmatchedNotifications
        do {
            unmatched = try UnmatchedNotifications(directory: settings.stateDirectory + "/unmatched")
        } catch {
            throw ValidationError("cannot use the state directory \(settings.stateDirectory): \(error)")
        }
        var tally = BackfillTally(unmatched: unmatched)
        if let apple = clients.apple {
            do throws(StoreAPIError) {
                for try await page in apple.api.notificationHistory(from: start, to: now) {
                    for item in page.notifications {
                        let body = Array(JSONValue.object([("signedPayload", .string(item.signedPayload))]).jsonText.utf8)
                        await tally.apply("apple", body) { () async throws(ReceiveFailure) in try await apple.receiver.receive(body: body) }
                    }
                }
            } catch {
                tally.stopped("apple", error.description)
            }
        }
        if let stripe = clients.stripe {
            // Oldest first, as they happened and as live delivery in order would apply them: each
            // subscription event carries the subscription as it was then, and entitled ignores an event
            // older than the newest it applied, so newest first would drop a refund followed by a later
            // update of its subscription.
            let types = [
                "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted", "customer.subscription.paused",
                "customer.subscription.resumed", "charge.refunded",
            ]
            do throws(StoreAPIError) {
                for try await page in stripe.api.eventsOldestFirst(createdSince: start, types: types) {
                    for event in page.data {
                        let body = Array(event.jsonText.utf8)
                        await tally.apply("stripe", body) { () async throws(ReceiveFailure) in try await stripe.receiver.receive(verifiedBody: body) }
                    }
                }
            } catch {
                tally.stopped("stripe", error.description)
            }
        }
        if let google = clients.google {
            do throws(StoreAPIError) {
                for try await page in google.api.voidedPurchases(from: start, to: now) {
                    for voided in page.voidedPurchases {
                        // As Google's voidedPurchaseNotification would have said it, dated when it was voided.
                        let body = Self.pubSubPush(voided, packageName: google.receiver.settings.packageName)
                        await tally.apply("google", body) { () async throws(ReceiveFailure) in
                            try await google.receiver.receive(verifiedBody: body, now: Int64(Date().timeIntervalSince1970))
                        }
                    }
                }
            } catch {
                tally.stopped("google", error.description)
            }
            let reconciliation = Reconciler(
                gateway: gateway, stores: clients.reconcilerStores.filter { $0.source == "play_store" },
                window: .milliseconds(Int64(now.timeIntervalSince(start) * 1000))
            )
            let summary = await reconciliation.run(now: Int64(now.timeIntervalSince1970 * 1000)) { source, finding in
                if case .corrected(let membership, let changes) = finding {
                    print("reconciled \(source) membership \(membership.id): \(changes.joined(separator: ", "))")
                }
            }
            tally.reconciled(summary)
        }
        print(tally.summary)
        if tally.failures > 0 { throw ExitCode(3) }
    }

    /// A Pub/Sub push of Google's `voidedPurchaseNotification` for `voided`
    /// (https://developer.android.com/google/play/billing/rtdn-reference#voided-purchase), its message id
    /// made from the order, so that a second backfill is recognised.
    static func pubSubPush(_ voided: GoogleVoidedPurchase, packageName: String) -> [UInt8] {
        let notification = JSONValue.object([
            ("version", .string("1.0")), ("packageName", .string(packageName)),
            ("eventTimeMillis", .string(String(voided.voidedTimeMillis ?? Int64(Date().timeIntervalSince1970 * 1000)))),
            (
                "voidedPurchaseNotification",
                .object(
                    [("purchaseToken", .string(voided.purchaseToken))] + (voided.orderID.map { [("orderId", JSONValue.string($0))] } ?? [])
                )
            ),
        ])
        let id = "backfill-voided-" + SHA256.hash(data: Data((voided.orderID ?? voided.purchaseToken).utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        let message = JSONValue.object([("messageId", .string(id)), ("data", .string(Data(notification.jsonText.utf8).base64EncodedString()))])
        return Array(JSONValue.object([("message", message), ("subscription", .string("backfill"))]).jsonText.utf8)
    }
}

/// What a backfill did, by store.
struct BackfillTally {
    let unmatched: UnmatchedNotifications
    private var outcomes: [String: [String: Int]] = [:]
    private var stops: [String: String] = [:]
    private var reconciliation: Reconciler.Summary?
    private(set) var failures = 0

    init(unmatched: UnmatchedNotifications) {
        self.unmatched = unmatched
    }

    /// Applies one notification with `receive`, keeping it when its purchase is not granted yet.
    mutating func apply(_ store: String, _ body: [UInt8], _ receive: () async throws(ReceiveFailure) -> NotificationOutcome) async {
        do {
            let outcome = try await receive()
            if case .awaitingPurchase(let original, let reason) = outcome {
                let id = SHA256.hash(data: body).prefix(16).map { String(format: "%02x", $0) }.joined()
                do {
                    try unmatched.keep(store: store, id: id, originalTransaction: original, reason: reason, body: body, now: Int64(Date().timeIntervalSince1970 * 1000))
                } catch {
                    count(store, "failed")
                    return
                }
            }
            count(store, outcome.name)
        } catch {
            count(store, "failed")
        }
    }

    mutating func stopped(_ store: String, _ why: String) {
        stops[store] = why
        failures += 1
    }

    mutating func reconciled(_ summary: Reconciler.Summary) {
        reconciliation = summary
        failures += summary.failed.values.reduce(0, +) + summary.stopped.count
    }

    private mutating func count(_ store: String, _ outcome: String) {
        outcomes[store, default: [:]][outcome, default: 0] += 1
        if outcome == "failed" { failures += 1 }
    }

    var summary: String {
        var lines: [String] = []
        for store in Set(outcomes.keys).union(stops.keys).sorted() {
            let counts = outcomes[store] ?? [:]
            var line = "\(store): " + ["applied", "duplicate", "ignored", "unmatched", "failed"].map { "\($0) \(counts[$0] ?? 0)" }.joined(separator: ", ")
            if let stop = stops[store] { line += "; stopped: \(stop)" }
            lines.append(line)
        }
        if let reconciliation { lines.append(Reconciliation.describe(reconciliation)) }
        return lines.isEmpty ? "nothing to backfill" : lines.joined(separator: "\n")
    }
}
