/// Why the store refused an operation.
public enum StoreError: Error, Hashable, Sendable {
    /// No membership has this id.
    case unknownMembership(MembershipID)
    /// The catalog does not define this entitlement.
    case unknownEntitlement(String)
    /// `undefine` named an entitlement the catalog does not define: there is nothing to remove.
    case nothingToUndefine(String)
    /// A grant reused the idempotency key of an earlier grant that asked for something else (another
    /// product, subject, plan or source): a client bug, not a retry.
    case idempotencyKeyReused(key: String, membership: MembershipID)
    /// A grant reported a purchase (its `originalTransactionId`) that a membership of another owner holds,
    /// and the transfer rule keeps it there (or the grant names no user to transfer it to).
    case purchaseOwnedElsewhere(originalTransactionId: String, membership: MembershipID, rule: TransferRule?)
    /// A lifecycle event dated further ahead of the store's clock than `Limits.maximumEventLead`: applied,
    /// it would make every real event after it look out of order.
    case eventFromTheFuture(eventTime: Timestamp, now: Timestamp)
    /// The journal refused the change (its disk is full or failed): nothing of it took effect; the reason
    /// says whether changes resume by themselves or after a restart. Reads go on.
    case changesUnavailable(reason: String)
    /// A change replayed during recovery contradicts the state (a membership id used twice, a sequence
    /// number out of order): the log does not describe a history this store could have written.
    case inconsistentReplay(String)

    /// A stable machine-readable code for the failure.
    public var code: Code {
        switch self {
        case .unknownMembership, .unknownEntitlement, .nothingToUndefine: return .notFound
        case .idempotencyKeyReused, .purchaseOwnedElsewhere: return .conflict
        case .eventFromTheFuture: return .invalid
        case .changesUnavailable: return .unavailable
        case .inconsistentReplay: return .internal
        }
    }

    /// A sentence a person can act on.
    public var message: String {
        switch self {
        case .unknownMembership(let id):
            return "no membership has the id \"\(id)\""
        case .unknownEntitlement(let name):
            return "the catalog has no entitlement \"\(name)\"; define it first or check a product instead"
        case .nothingToUndefine(let name):
            return "the catalog has no entitlement \"\(name)\": nothing to remove (catalog lists the entitlements)"
        case .idempotencyKeyReused(let key, let membership):
            return "the idempotency key \"\(key)\" was used by an earlier grant that created membership \(membership) for another product, subject, plan or source; use a new key for a new grant"
        case .purchaseOwnedElsewhere(let original, let membership, let rule?):
            return "the purchase with originalTransactionId \"\(original)\" belongs to membership \(membership) of another user, and the server's transfer rule is \"\(rule.rawValue)\": it stays there"
        case .purchaseOwnedElsewhere(let original, let membership, nil):
            return "the purchase with originalTransactionId \"\(original)\" belongs to membership \(membership) of another owner; only a grant to a user can take it over (transfer rule)"
        case .eventFromTheFuture(let eventTime, let now):
            return "the event's eventTime \(eventTime.rfc3339) is more than \(Limits.maximumEventLead.milliseconds / 60_000) minutes ahead of the server's clock (\(now.rfc3339)); events are dated when they happened"
        case .changesUnavailable(let reason):
            return "the server cannot take writes now: \(reason); nothing was changed, reads go on"
        case .inconsistentReplay(let problem):
            return "the log cannot be replayed: \(problem)"
        }
    }

    public enum Code: String, Sendable {
        case notFound = "not_found"
        case conflict
        /// The request is well formed but its values cannot be accepted.
        case invalid
        case `internal`
        /// Changes cannot be recorded right now; the message says why and until when.
        case unavailable
    }
}
