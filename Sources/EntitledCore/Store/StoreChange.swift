/// One change to the store, with every value decided (ids, times), so that applying the same changes in
/// the same order always rebuilds the same state. The durability layer logs these and replays them.
///
/// `indirect`: a change is one reference, so the copies a write makes of it (its decision, the log
/// record, the result read from it) each retain it once, where a 208-byte value went through the
/// runtime's generic copy and destroy of each of its strings (about 4% of a bulk load's CPU per grant in
/// `perf`; five alternated runs, with log records written without a `LoggedChange`: 3.20 against 3.53 µs
/// per grant).
public indirect enum StoreChange: Hashable, Sendable {
    /// A new membership (grant), with the idempotency key the grant gave, if any.
    case create(Membership, idempotencyKey: String?)
    /// Every unclaimed membership of `device` now belongs to `user`.
    case claim(device: String, user: String)
    /// A membership is revoked.
    case revoke(MembershipID, Revocation)
    /// An entitlement's products are replaced.
    case define(entitlement: String, products: [String])
    /// An entitlement leaves the catalog.
    case undefine(entitlement: String)
    /// A person is erased: the memberships `user` owns and the unclaimed guest memberships of `device`,
    /// with their history and idempotency keys; other users' memberships lose the device
    /// (`StoreState+Erasure.swift`). At least one of the two is given.
    case erase(user: String?, device: String?)
    /// A lifecycle event was applied: the membership is now `result` (same id, user and device). The
    /// result is recorded, not recomputed at replay, so that replaying an old log gives the same state
    /// even after the rules for applying events change.
    case event(LifecycleEvent, result: Membership)
    /// A membership moves to `toUser`: a purchase its owner made was reported for another user and the
    /// transfer rule gave it to them (`TransferRule.transfer`). A guest membership leaves its device's
    /// unclaimed list as a claim would take it.
    case transfer(MembershipID, toUser: String)
    /// A membership's expiry moves to `expiresAt`, later than it was: a manual extension
    /// (`EntitlementStore.extend`), not a store's event.
    case extend(MembershipID, expiresAt: Timestamp)
}

/// Where the store records each change, in order, before the change takes effect in memory.
///
/// `EntitlementStore` calls `record` under its write lock, so records arrive in exactly the order the
/// changes are applied, numbered 1, 2, 3, ... without gaps.
public protocol ChangeJournal: Sendable {
    /// Records `change`, made in `context`, as number `sequence`. Throws when changes can no longer be
    /// recorded (a failed disk): the store then refuses the change.
    func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError)
}

/// The result of a write, with the number of the last change the store had recorded when the write
/// returned: the write may be acknowledged once the journal holds that change durably. A write that
/// changed nothing (a repeated claim or revoke) still carries it, because its answer reflects every
/// change up to it.
public struct Recorded<Value: Sendable>: Sendable {
    public var value: Value
    public var sequence: UInt64
    /// Whether the write changed nothing because an earlier one already did it: a grant retried with its
    /// idempotency key, a revoke of a revoked membership.
    public var isReplay: Bool
    /// A grant that moved an existing membership to its user (`TransferRule.transfer`): whom it was taken
    /// from (a user, or for a guest purchase its device).
    public var transferredFrom: Subject?

    public init(_ value: Value, sequence: UInt64, isReplay: Bool = false) {
        self.value = value
        self.sequence = sequence
        self.isReplay = isReplay
    }
}

/// A consistent copy of everything the store holds, as of change number `sequence`: what a snapshot
/// writes and what recovery starts from.
public struct StoreImage: Sendable {
    /// The last change this image includes (0 for an empty store).
    public var sequence: UInt64
    public var memberships: MembershipTable
    /// Entitlement name to its products (sorted, without duplicates).
    public var catalog: [String: [String]]
    /// Each grant's idempotency key, with the position in `memberships` of the membership it created.
    public var idempotencyKeys: ShardedDictionary<String, UInt32>
    /// The revisions of the memberships that have any, by position in `memberships`, oldest first.
    public var revisions: ShardedDictionary<UInt32, [MembershipRevision]>
    /// The history of the catalog, oldest first.
    public var catalogRevisions: [CatalogRevision]
    /// The erasures made, oldest first.
    public var erasures: [ErasureRecord]
    /// How many of `memberships` are erased slots (`Membership.isErased`): a snapshot leaves them out
    /// (`withoutErasedMemberships()`).
    public var erasedMembershipCount: Int
    /// The change feed's index (`ChangeFeed`).
    public var feed: ChangeFeed

    public init(
        sequence: UInt64,
        memberships: MembershipTable,
        catalog: [String: [String]],
        idempotencyKeys: ShardedDictionary<String, UInt32> = ShardedDictionary(),
        revisions: ShardedDictionary<UInt32, [MembershipRevision]> = ShardedDictionary(),
        catalogRevisions: [CatalogRevision] = [],
        erasures: [ErasureRecord] = [],
        feed: ChangeFeed? = nil,
        erasedMembershipCount: Int = 0
    ) {
        self.sequence = sequence
        self.memberships = memberships
        self.catalog = catalog
        self.idempotencyKeys = idempotencyKeys
        self.revisions = revisions
        self.catalogRevisions = catalogRevisions
        self.erasures = erasures
        self.erasedMembershipCount = erasedMembershipCount
        // An image without a feed (a snapshot written before there was one) starts the feed after itself.
        self.feed = feed ?? ChangeFeed(horizon: sequence + 1)
    }
}
