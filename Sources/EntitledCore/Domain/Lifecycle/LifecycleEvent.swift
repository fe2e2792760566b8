/// Something a store reported about a subscription after its purchase (a webhook, a server
/// notification), applied to one membership with `Membership.applying(_:)`.
///
/// Stores deliver these at least once and not always in order, so every event carries the store's id
/// (`id`, for duplicates) and when it happened (`time`, for order).
public struct LifecycleEvent: Hashable, Sendable {
    public var id: String
    /// When it happened at the store.
    public var time: Timestamp
    public var kind: Kind
    /// The store's transaction behind the event, if it names one: a renewal or product change adds it to
    /// the membership's transactions; a refund marks it (else the newest) refunded.
    public var transactionId: String?

    public init(id: String, time: Timestamp, kind: Kind, transactionId: String? = nil) {
        self.id = id
        self.time = time
        self.kind = kind
        self.transactionId = transactionId
    }

    /// What happened.
    public enum Kind: Hashable, Sendable {
        /// A new period was paid for: access until `expiresAt`; ends a trial and a billing issue.
        case renewal(expiresAt: Timestamp)
        /// Renewal turned off: access continues until the membership expires.
        case cancellation
        /// Renewal turned back on.
        case uncancellation
        /// The store could not charge; with a grace period, access continues until it ends.
        case billingIssue(gracePeriodExpiresAt: Timestamp?)
        /// The store charged after a billing issue.
        case billingRecovered
        /// Access ends at the event's time, whatever `expiresAt` said.
        case expiration
        /// Access stops from the event's time until a `resume`.
        case pause
        /// Access continues; with `expiresAt`, until then.
        case resume(expiresAt: Timestamp?)
        /// The subscription moved to another product.
        case productChange(productId: String)
        /// The purchase was refunded: like a revoke, final, except that the store may reverse the refund.
        case refund
        /// The store reversed a refund (Apple's REFUND_REVERSED, after a dispute): what the refund took away is
        /// given back. The one event a membership revoked by a refund still takes.
        case refundReversal
        /// Access extended to `expiresAt` without a payment (RevenueCat's SUBSCRIPTION_EXTENDED,
        /// Whop's free days).
        case `extension`(expiresAt: Timestamp)

        /// The kinds' names, as the protocol, the log and the snapshots spell them: the one place they are
        /// written. A reader parses a name with `Name(rawValue:)` and switches over it, so that a new kind is
        /// a compile error wherever it is not handled yet.
        public enum Name: String, CaseIterable, Sendable {
            case renewal, cancellation, uncancellation
            case billingIssue = "billing_issue"
            case billingRecovered = "billing_recovered"
            case expiration, pause, resume
            case productChange = "product_change"
            case refund
            case `extension`
            case refundReversal = "refund_reversal"
        }

        /// Every kind's name, in the order the protocol lists them.
        public static let allNames = Name.allCases.map(\.rawValue)

        /// The kind's name.
        public var kindName: Name {
            switch self {
            case .renewal: .renewal
            case .cancellation: .cancellation
            case .uncancellation: .uncancellation
            case .billingIssue: .billingIssue
            case .billingRecovered: .billingRecovered
            case .expiration: .expiration
            case .pause: .pause
            case .resume: .resume
            case .productChange: .productChange
            case .refund: .refund
            case .refundReversal: .refundReversal
            case .extension: .extension
            }
        }

        /// The name of the kind in the protocol.
        public var name: String { kindName.rawValue }
    }
}

/// Whether an event changed the membership, and if not, why.
public enum EventOutcome: Hashable, Sendable {
    case applied
    /// Not applied; the membership is unchanged.
    case ignored(IgnoredEventReason)

    public var isApplied: Bool { self == .applied }
}

/// Why an event was not applied.
public enum IgnoredEventReason: String, Hashable, Sendable {
    /// An event with the same id was applied to this membership before (a redelivery).
    case duplicate
    /// Its `eventTime` is older than the newest event applied to this membership: it describes a state
    /// the membership has already moved past.
    case outOfOrder = "out_of_order"
    /// The membership is revoked, which is final (but for a `refund_reversal` of a refund).
    case revoked
}
