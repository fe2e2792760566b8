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
    /// `ownership`, `grantType`.
    public var terms: PurchaseTerms
    /// The store's transaction of the purchase, if the grant names one: recorded as the membership's
    /// first transaction.
    public var transaction: Transaction?
    /// Makes a retried grant safe: a grant with a key some earlier grant used creates nothing and returns
    /// that grant's membership.
    public var idempotencyKey: String?
    /// When the store sold it, for a purchase imported after the fact (a subscriber of two years): the
    /// membership's `createdAt` and its first transaction's time, and what a `duration` counts from.
    /// `nil` for a purchase made now: the store's clock dates it. See `StoreState.decideGrant` for the
    /// bounds (not more than `Limits.maximumEventLead` ahead of the clock, taken as the clock when ahead).
    public var purchasedAt: Timestamp?

    public init(
        subject: Subject,
        productId: String,
        planId: String? = nil,
        source: PurchaseSource = .default,
        expiry: Expiry = .lifetime,
        terms: PurchaseTerms = .standard,
        transaction: Transaction? = nil,
        idempotencyKey: String? = nil,
        purchasedAt: Timestamp? = nil
    ) {
        self.subject = subject
        self.productId = productId
        self.planId = planId
        self.source = source
        self.expiry = expiry
        self.terms = terms
        self.transaction = transaction
        self.idempotencyKey = idempotencyKey
        self.purchasedAt = purchasedAt
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

    /// The lifecycle a membership starts with: the terms, and the purchase transaction.
    func initialLifecycle(createdAt: Timestamp, expiresAt: Timestamp?) -> MembershipLifecycle {
        if transaction == nil, terms == .standard { return .standard }
        var initial = MembershipLifecycle(
            willRenew: terms.willRenew, periodType: terms.periodType, renewsCount: terms.renewsCount,
            environment: terms.environment, ownership: terms.ownership, grantType: terms.grantType
        )
        if let transaction {
            initial.transactions = [
                PurchaseTransaction(
                    id: transaction.id, originalTransactionId: transaction.originalTransactionId,
                    type: terms.periodType == .trial ? "trial_started" : "purchase", time: createdAt, expiresAt: expiresAt
                )
            ]
        }
        return initial
    }

    /// Whether `membership`, as created, is what this grant would have created: the test a reused
    /// idempotency key must pass to return it. Product, plan, source and subject are compared (the expiry,
    /// purchase terms and `purchasedAt` are not: a retry computes a `duration`'s end anew).
    func matches(_ membership: Membership) -> Bool {
        guard membership.productId == productId, membership.planId == planId, membership.source == source,
            membership.device == subject.device
        else { return false }
        return membership.user == subject.user
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
