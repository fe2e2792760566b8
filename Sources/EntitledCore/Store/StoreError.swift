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
    /// An imported grant's `purchasedAt` further ahead of the store's clock than `Limits.maximumEventLead`:
    /// a purchase is dated when the store sold it, which cannot be later than now (give or take the
    /// clocks' disagreement).
    case purchaseFromTheFuture(purchasedAt: Timestamp, now: Timestamp)
    /// An `extend` that cannot be made: the membership is revoked or never expires, or the new expiry
    /// would not be later than both its expiry and now.
    case cannotExtend(MembershipID, ExtensionRefusal)
    /// The journal refused the change (its disk is full or failed): nothing of it took effect; the reason
    /// says whether changes resume by themselves or after a restart. Reads go on.
    case changesUnavailable(reason: String)
    /// A paged read's `after` names no membership (it was erased, or never existed): the listing cannot
    /// go on from there.
    case unknownPageCursor(String)
    /// A listing of a source's memberships was asked to go on from a position (`SourceCursor`) this store
    /// cannot find: given by another node or before a restart, after a membership erased since or not yet
    /// applied here (or not a cursor a store gave).
    case unknownSourceCursor(String)
    /// A read that goes through a subject's memberships one by one (`operation`) was asked of a subject
    /// with more of them, or of their recorded changes, than one read may go through
    /// (`Limits.maximumMembershipsPerSubjectRead`, `maximumChangesPerSubjectRead`).
    case subjectTooLarge(Subject, operation: String, size: SubjectSize)
    /// A read of the change feed asked for the changes after `after`, and the feed no longer holds all of
    /// them: it holds every change after `oldestAfter` only (`FeedRetention`).
    case feedTruncated(after: UInt64, oldestAfter: UInt64, retention: FeedRetention)
    /// A read of the change feed gave as `after` a number that names no change of this history: the
    /// numbering passed over `skipped` (a cluster's database lost changes in a failover), so the reader
    /// was told of a change that is lost.
    case feedLostChanges(after: UInt64, skipped: ClosedRange<UInt64>)
    /// A change replayed during recovery contradicts the state (a membership id used twice, a sequence
    /// number out of order): the log does not describe a history this store could have written.
    case inconsistentReplay(String)

    /// A stable machine-readable code for the failure.
    public var code: Code {
        switch self {
        case .unknownMembership, .unknownEntitlement, .nothingToUndefine: return .notFound
        case .idempotencyKeyReused, .purchaseOwnedElsewhere: return .conflict
        case .cannotExtend(_, .revoked), .cannotExtend(_, .lifetime): return .conflict
        case .cannotExtend: return .invalid
        case .eventFromTheFuture, .purchaseFromTheFuture, .unknownPageCursor, .unknownSourceCursor: return .invalid
        case .subjectTooLarge: return .overLimit
        case .feedTruncated, .feedLostChanges: return .truncated
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
        case .purchaseFromTheFuture(let purchasedAt, let now):
            return "field \"purchasedAt\" \(purchasedAt.rfc3339) is more than \(Limits.maximumEventLead.milliseconds / 60_000) minutes ahead of the server's clock (\(now.rfc3339)): it is when the store sold the purchase, which has happened"
        case .cannotExtend(let id, .revoked(let revocation)):
            return "membership \(id) was revoked (\(revocation.reason), \(revocation.revokedAt.rfc3339)): a revoked membership cannot be extended; grant a new one"
        case .cannotExtend(let id, .lifetime):
            return "membership \(id) never expires (lifetime access): there is no expiry to extend"
        case .cannotExtend(let id, .notLater(let requested, let expiresAt)):
            return "expiresAt \(requested.rfc3339) is not later than the expiry of membership \(id) (\(expiresAt.rfc3339)): extend only moves an expiry later; revoke ends access"
        case .cannotExtend(_, .inThePast(let requested, let now)):
            return "expiresAt \(requested.rfc3339) is not later than the server's clock (\(now.rfc3339)): an extension gives access until a later time"
        case .cannotExtend(let id, .beyondRange(let expiresAt)):
            return "the expiry of membership \(id) (\(expiresAt.rfc3339)) cannot be extended by this much: the new expiry would be after \(Timestamp.rfc3339Range.upperBound.rfc3339)"
        case .unknownPageCursor(let cursor):
            return "\"after\" names no membership (\(cursor)): it was erased, or is not a \"next\" this server gave; start the listing again without \"after\""
        case .unknownSourceCursor(let cursor):
            return "\"after\" (\(cursor)) is not a position this server can go on from: it was given by another node or before a restart, and the membership it continues after is not here (erased since, or not yet applied on this node), or it is not a \"next\" a server gave; start the listing again without \"after\""
        case .subjectTooLarge(let subject, let operation, let size):
            let what: String
            switch size {
            case .memberships(let count):
                what = "\(count) memberships, more than the \(Limits.maximumMembershipsPerSubjectRead)"
            case .moreMembershipsThan(let count):
                what = "more than \(count) memberships, more than the \(Limits.maximumMembershipsPerSubjectRead)"
            case .changes(let count, let memberships):
                what = "\(count) recorded changes to its \(memberships) memberships, more than the \(Limits.maximumChangesPerSubjectRead)"
            }
            return "\(subject.description) has \(what) that \(operation) goes through one by one (so that no request holds the server for long); list its memberships with memberships, page by page (limit, after), and ask check without an earlier \"at\""
        case .changesUnavailable(let reason):
            return "the server cannot take writes now: \(reason); nothing was changed, reads go on"
        case .feedTruncated(let after, let oldestAfter, let retention):
            return "the change feed no longer holds every change after \(after): it holds those after \(oldestAfter) (it keeps \(retention.description)); take a full copy with export, then follow the feed after the seq the export names"
        case .feedLostChanges(let after, let skipped):
            return "change \(after) is not in this server's history: the database lost changes in a failover and the numbering resumed after \(skipped.upperBound) (changes \(skipped.lowerBound) to \(skipped.upperBound) name nothing); what was read up to it may include lost changes: take a full copy with export, then follow the feed after the seq the export names"
        case .inconsistentReplay(let problem):
            return "the log cannot be replayed: \(problem)"
        }
    }

    /// Why an `extend` cannot be made.
    public enum ExtensionRefusal: Hashable, Sendable {
        /// The membership is revoked: an extension never undoes a revocation.
        case revoked(Revocation)
        /// The membership never expires.
        case lifetime
        /// The requested expiry is not later than the membership's.
        case notLater(requested: Timestamp, expiresAt: Timestamp)
        /// The requested expiry is not later than the server's clock.
        case inThePast(requested: Timestamp, now: Timestamp)
        /// The new expiry would be later than any time the protocol can write.
        case beyondRange(expiresAt: Timestamp)
    }

    /// How large a subject refused by `subjectTooLarge` is.
    public enum SubjectSize: Hashable, Sendable {
        /// It has this many memberships (now, or now and earlier, as the read counts them).
        case memberships(Int)
        /// It has more than this many; the read did not count further.
        case moreMembershipsThan(Int)
        /// Its memberships' recorded changes (audit entries) number this many.
        case changes(Int, memberships: Int)
    }

    public enum Code: String, Sendable {
        case notFound = "not_found"
        case conflict
        /// The request is well formed but its values cannot be accepted.
        case invalid
        case `internal`
        /// Changes cannot be recorded right now; the message says why and until when.
        case unavailable
        /// The request would go past a documented limit on the work one request may do.
        case overLimit = "over_limit"
        /// A read of the change feed from before the oldest change it still holds.
        case truncated
    }
}
