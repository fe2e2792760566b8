/// What a write's decision looked at and what its change touches, as a set of keys: memberships, users,
/// devices, idempotency keys, store transactions and entitlements.
///
/// A cluster decides a group of writes against one state and applies their changes in order. That gives
/// the changes one server would have made only when no write's decision depends on an earlier write of
/// the group; two writes whose footprints share no key cannot (each decision reads only what its keys
/// name, each change writes only that). So a group takes writes while their footprints are disjoint and
/// ends at the first that is not; an erasure, which reads and changes too much to list, is a group of its
/// own (`isExclusive`).
///
/// The same holds across nodes: a group decided against a replica that is a few changes behind is still
/// what the newest state would have decided when no change committed since touched its keys, which the
/// cluster's database checks before it commits the group (Protocol/CLUSTER.md).
///
/// Keys are hashes, stable across processes and machines (FNV-1a, 64 bits): two different keys that
/// collide only make two independent writes wait for each other, never join two dependent ones.
public struct WriteFootprint: Sendable {
    /// The hashed keys, unsorted, few (a grant has about six).
    public private(set) var keys: [Int64] = []
    /// Whether the write must be decided alone: nothing before it in its group, nothing after.
    public var isExclusive = false
    /// Whether keys are kept: a single server, which decides and applies each write at once, has no use
    /// for them and does not pay for their hashing and their array.
    let isTracking: Bool

    init(tracking: Bool) {
        isTracking = tracking
    }

    enum Kind: UInt8 {
        case membership, user, device, idempotencyKey, transaction, originalTransaction, entitlement
    }

    mutating func add(_ kind: Kind, _ name: String) {
        guard isTracking else { return }
        keys.append(Self.stableHash(kind, name))
    }

    /// FNV-1a over the kind and the name's UTF-8 bytes.
    static func stableHash(_ kind: Kind, _ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        mix(kind.rawValue)
        for byte in name.utf8 { mix(byte) }
        return Int64(bitPattern: hash)
    }

    mutating func add(_ id: MembershipID) {
        add(.membership, id.description)
    }

    /// The subject's user and device.
    mutating func add(_ subject: Subject) {
        if let user = subject.user { add(.user, user) }
        if let device = subject.device { add(.device, device) }
    }

    /// Everything a membership is found by: its id, owner, device and transactions.
    mutating func add(_ membership: Membership) {
        guard isTracking else { return }
        add(membership.id)
        if let user = membership.user { add(.user, user) }
        if let device = membership.device { add(.device, device) }
        if membership.hasLifecycle {
            for transaction in membership.lifecycle.transactions {
                add(.transaction, transaction.id)
                add(.originalTransaction, transaction.originalTransactionId)
            }
        }
    }
}

/// The footprints of the writes a group has taken so far (`WriteFootprint`).
public struct GroupFootprint: Sendable {
    /// Every key of the writes taken.
    public private(set) var keys: Set<Int64> = []
    /// Whether one of them must be alone (then it is the only one).
    public private(set) var isExclusive = false
    private var isEmpty = true

    public init() {}

    /// Takes `write` into the group if it is independent of every write taken so far (and neither it nor
    /// the group must be alone); returns whether it was taken.
    public mutating func admit(_ write: WriteFootprint) -> Bool {
        if !isEmpty {
            guard !isExclusive, !write.isExclusive else { return false }
            for key in write.keys where keys.contains(key) { return false }
        }
        keys.formUnion(write.keys)
        isExclusive = write.isExclusive
        isEmpty = false
        return true
    }
}
