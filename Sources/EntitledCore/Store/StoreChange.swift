/// One change to the store, with every value decided (ids, times), so that applying the same changes in
/// the same order always rebuilds the same state. The durability layer logs these and replays them.
public enum StoreChange: Hashable, Sendable {
    /// A new membership (grant).
    case create(Membership)
    /// Every unclaimed membership of `device` now belongs to `user`.
    case claim(device: String, user: String)
    /// A membership is revoked.
    case revoke(MembershipID, Revocation)
    /// An entitlement's products are replaced.
    case define(entitlement: String, products: [String])
}

/// Where the store records each change, in order, before the change takes effect in memory.
///
/// `EntitlementStore` calls `record` under its write lock, so records arrive in exactly the order the
/// changes are applied, numbered 1, 2, 3, ... without gaps.
public protocol ChangeJournal: Sendable {
    /// Records `change` as number `sequence`. Throws when changes can no longer be recorded (a failed
    /// disk): the store then refuses the change.
    func record(_ change: StoreChange, sequence: UInt64) throws(JournalError)
}

/// The journal cannot take changes any more.
public struct JournalError: Error, Hashable, Sendable {
    /// What went wrong, for the operator and the client's error message.
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }
}

/// The result of a write, with the number of the last change the store had recorded when the write
/// returned: the write may be acknowledged once the journal holds that change durably. A write that
/// changed nothing (a repeated claim or revoke) still carries it, because its answer reflects every
/// change up to it.
public struct Recorded<Value: Sendable>: Sendable {
    public var value: Value
    public var sequence: UInt64

    public init(_ value: Value, sequence: UInt64) {
        self.value = value
        self.sequence = sequence
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

    public init(sequence: UInt64, memberships: MembershipTable, catalog: [String: [String]]) {
        self.sequence = sequence
        self.memberships = memberships
        self.catalog = catalog
    }
}
