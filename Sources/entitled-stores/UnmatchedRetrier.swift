import EntitledStores
import Foundation
import Logging
import ServiceLifecycle

/// Tries the kept notifications again every `interval` (the App Store's, Google Play's and Stripe's, each
/// through its receiver, with the signature it was verified with when it came): each one whose purchase a
/// grant has named since is applied (and removed); the others stay. A notification that can never apply (its verification fails
/// now) is removed with an error in the log.
struct UnmatchedRetrier: Service {
    let unmatched: UnmatchedNotifications
    let apple: AppleReceiver?
    let google: GooglePlayReceiver?
    let stripe: StripeReceiver?
    let interval: Duration
    let metrics: StoreMetrics
    let logger: Logger

    func run() async throws {
        // Cancelled at a graceful shutdown, so a stop does not wait for the next round.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                await retryOnce()
            }
        }
    }

    func retryOnce() async {
        for entry in unmatched.entries() {
            do {
                let outcome: NotificationOutcome
                switch entry.store {
                case "apple":
                    guard let apple else { continue }
                    outcome = try await apple.receive(body: entry.body)
                case "google":
                    // Only once a grant names its purchase: trying it reads the Play Developer API, whose quota
                    // is daily, and many kept notifications would spend it every round.
                    guard let google, try await google.isGranted(purchaseToken: entry.originalTransaction) else { continue }
                    outcome = try await google.receive(verifiedBody: entry.body, now: Int64(Date().timeIntervalSince1970))
                case "stripe":
                    guard let stripe, try await stripe.isGranted(invoice: entry.originalTransaction) else { continue }
                    outcome = try await stripe.receive(verifiedBody: entry.body)
                default:
                    continue
                }
                if case .awaitingPurchase = outcome { continue }
                unmatched.remove(entry)
                metrics.finished(entry.store, outcome)
                logger.info("applied a kept \(entry.store) notification: its purchase (original transaction \(entry.originalTransaction)) was granted")
            } catch {
                switch error {
                case .unavailable:
                    return  // entitled is down: the next round tries again
                case .refused(let refusal):
                    unmatched.remove(entry)
                    logger.error("dropped a kept \(entry.store) notification that no longer verifies: \(refusal)")
                }
            }
        }
    }
}
