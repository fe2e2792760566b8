/// What a write gives its writer, read from the store right after its change (or, when it changed
/// nothing, as the store was when it was decided).
public enum WriteResult: Sendable {
    /// The membership a grant created, or the one it found: an earlier grant with the same idempotency key
    /// or the same purchase (`isReplay`), or a purchase moved from another owner (`transferredFrom`).
    case granted(Membership, isReplay: Bool, transferredFrom: Subject?)
    /// The memberships a claim moved to its user, as they are after it (empty when none moved).
    case claimed([Membership])
    /// The revoked membership; `isReplay` when it was revoked before.
    case revoked(Membership, isReplay: Bool)
    /// The extended membership, and the expiry it had before.
    case extended(Membership, previousExpiresAt: Timestamp)
    /// The products that unlock the entitlement now (sorted, without duplicates).
    case defined(products: [String])
    /// The products the removed entitlement had.
    case undefined(products: [String])
    /// The membership after the event (as it was, when the event was ignored), and what became of it.
    case eventApplied(Membership, EventOutcome)
    /// What an erasure removed.
    case erased(Erasure)
}
