import EntitledClient

/// An App Store subscription (or one-time purchase) as the App Store Server API tells it now, verified:
/// every transaction of it (Get Transaction History, `JWSTransactionDecodedPayload`s) and, for a
/// subscription, its status and renewal info (Get All Subscription Statuses: `lastTransactions` entry's
/// `status` and `signedRenewalInfo`).
/// (https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history,
/// .../get-all-subscription-statuses, .../status)
public struct AppleSubscriptionState: Sendable {
    /// The subscription's transactions, oldest purchase first.
    public var transactions: [JSONValue]
    /// 1 active, 2 expired, 3 in billing retry, 4 in the billing grace period, 5 revoked; `nil` for a
    /// one-time purchase (no status).
    public var status: Int?
    /// `JWSRenewalInfoDecodedPayload`: `autoRenewStatus`, `gracePeriodExpiresDate`, `autoRenewProductId`.
    public var renewal: JSONValue?

    public init(transactions: [JSONValue], status: Int?, renewal: JSONValue?) {
        self.transactions = transactions.sorted {
            ($0["purchaseDate"]?.intValue ?? 0, $0["transactionId"]?.stringValue ?? "") < ($1["purchaseDate"]?.intValue ?? 0, $1["transactionId"]?.stringValue ?? "")
        }
        self.status = status
        self.renewal = renewal
    }
}
