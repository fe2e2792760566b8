/// A request to create a membership, before the store gives it an id and a creation time.
public struct Grant: Sendable {
    /// Who gets it: a user (owned by the user), a device (a guest purchase) or both (bought on the device
    /// while logged in: owned by the user).
    public var subject: Subject
    public var productId: String
    public var planId: String?
    public var source: PurchaseSource
    public var expiry: Expiry
    /// What is known of the subscription at purchase: `willRenew`, `periodType`, `environment`,
    /// `ownership`, `grantType`. Its later fields (renewals, cancellation, billing, events) are ignored:
    /// only lifecycle events set them.
    public var lifecycle: MembershipLifecycle
    /// The store's transaction of the purchase, if the grant names one: recorded as the membership's
    /// first transaction.
    public var transaction: Transaction?
    /// Makes a retried grant safe: a grant with a key some earlier grant used creates nothing and returns
    /// that grant's membership.
    public var idempotencyKey: String?

    public init(
        subject: Subject,
        productId: String,
        planId: String? = nil,
        source: PurchaseSource = .default,
        expiry: Expiry = .lifetime,
        lifecycle: MembershipLifecycle = .standard,
        transaction: Transaction? = nil,
        idempotencyKey: String? = nil
    ) {
        self.subject = subject
        self.productId = productId
        self.planId = planId
        self.source = source
        self.expiry = expiry
        self.lifecycle = lifecycle
        self.transaction = transaction
        self.idempotencyKey = idempotencyKey
    }

    /// The store's ids of the purchase transaction.
    public struct Transaction: Hashable, Sendable {
        public var id: String
        /// The first transaction of the subscription; `id` when this is the first.
        public var originalTransactionId: String

        public init(id: String, originalTransactionId: String? = nil) {
            self.id = id
            self.originalTransactionId = originalTransactionId ?? id
        }
    }

    /// The lifecycle a membership starts with: the purchase-time fields of `lifecycle`, and the purchase
    /// transaction.
    func initialLifecycle(createdAt: Timestamp, expiresAt: Timestamp?) -> MembershipLifecycle {
        if transaction == nil, lifecycle == .standard { return .standard }
        var initial = MembershipLifecycle(
            willRenew: lifecycle.willRenew, periodType: lifecycle.periodType, environment: lifecycle.environment,
            ownership: lifecycle.ownership, grantType: lifecycle.grantType
        )
        if let transaction {
            initial.transactions = [
                PurchaseTransaction(
                    id: transaction.id, originalTransactionId: transaction.originalTransactionId,
                    type: lifecycle.periodType == .trial ? "trial_started" : "purchase", time: createdAt, expiresAt: expiresAt
                )
            ]
        }
        return initial
    }

    /// Whether `membership` is what this grant would have created: the test a reused idempotency key must
    /// pass to return it. A guest membership counts as the device's even after a user claimed it.
    func matches(_ membership: Membership) -> Bool {
        guard membership.productId == productId, membership.planId == planId, membership.source == source,
            membership.device == subject.device
        else { return false }
        return subject.user == nil || membership.user == subject.user
    }

    /// When a granted membership ends.
    public enum Expiry: Hashable, Sendable {
        case lifetime
        /// At a fixed time (which may already have passed, for importing history).
        case at(Timestamp)
        /// This long after the membership's creation.
        case after(TimeSpan)
    }
}
