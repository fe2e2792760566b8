import EntitledClient

/// The answer of Get All Subscription Statuses (`StatusResponse`,
/// https://developer.apple.com/documentation/appstoreserverapi/statusresponse): for each subscription
/// group of the customer, the newest transaction and renewal info of each of its subscriptions, verified
/// and decoded.
public struct AppStoreSubscriptionStatuses: Sendable, Hashable {
    /// The environment that knew the transaction (the sandbox after a production miss).
    public var environment: AppStoreServerAPI.Environment
    public var appAppleID: Int?
    public var groups: [Group]

    public struct Group: Sendable, Hashable {
        public var subscriptionGroupIdentifier: String
        public var lastTransactions: [LastTransaction]
    }

    /// One subscription's state (`LastTransactionsItem`).
    public struct LastTransaction: Sendable, Hashable {
        public var originalTransactionID: String
        /// `status` (https://developer.apple.com/documentation/appstoreserverapi/status): 1 active,
        /// 2 expired, 3 in billing retry, 4 in the billing grace period, 5 revoked.
        public var status: Int
        /// `signedTransactionInfo`, verified: a `JWSTransactionDecodedPayload`.
        public var transaction: JSONValue
        /// `signedRenewalInfo`, verified: a `JWSRenewalInfoDecodedPayload`.
        public var renewal: JSONValue?
    }
}
