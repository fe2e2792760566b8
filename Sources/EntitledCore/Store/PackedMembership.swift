/// A `Membership` as `MembershipTable` keeps it: 80 bytes with two strings, no optional padding.
///
/// At a million memberships every byte here is a megabyte: the fields a membership nearly always has are
/// stored flat (ids and times as integers, product and plan as numbers of an `InternedNames`), and what
/// few memberships have (a revocation, a lifecycle, an id the store did not make) shares one reference.
struct PackedMembership: Sendable {
    /// `MembershipID.bits`; 0 with `rare.otherID` when the id is not canonical.
    var idBits: UInt64
    var createdAt: Int64
    /// Valid when `flags` has `hasExpiry`.
    var expiresAt: Int64
    var user: String?
    var device: String?
    var rare: RareMembershipFields?
    /// Numbers in the table's `InternedNames`; `plan` is `-1` without a plan.
    var product: Int32
    var plan: Int32
    /// The position of the source in `PurchaseSource.allCases`.
    var source: UInt8
    var flags: UInt8

    static let hasExpiry: UInt8 = 1

    init(_ membership: Membership, names: inout InternedNames) {
        let bits = membership.id.bits
        idBits = bits ?? 0
        createdAt = membership.createdAt.millisecondsSinceEpoch
        expiresAt = membership.expiresAt?.millisecondsSinceEpoch ?? 0
        flags = membership.expiresAt == nil ? 0 : Self.hasExpiry
        user = membership.user
        device = membership.device
        product = names.intern(membership.productId)
        plan = membership.planId.map { names.intern($0) } ?? -1
        source = PurchaseSource.code(of: membership.source)
        if bits == nil || membership.revocation != nil || membership.lifecycleStorage != nil {
            rare = RareMembershipFields(
                otherID: bits == nil ? membership.id.rawValue : nil,
                revocation: membership.revocation,
                lifecycle: membership.lifecycleStorage
            )
        } else {
            rare = nil
        }
    }

    func unpacked(names: InternedNames) -> Membership {
        var membership = Membership(
            id: rare?.otherID.map { MembershipID(rawValue: $0) } ?? MembershipID(bits: idBits),
            productId: names[product],
            planId: plan < 0 ? nil : names[plan],
            device: device,
            user: user,
            createdAt: Timestamp(millisecondsSinceEpoch: createdAt),
            expiresAt: flags & Self.hasExpiry != 0 ? Timestamp(millisecondsSinceEpoch: expiresAt) : nil,
            source: PurchaseSource.allCases[Int(source)],
            revocation: rare?.revocation
        )
        membership.lifecycleStorage = rare?.lifecycle
        return membership
    }
}

/// The parts of a membership that most never have, out of line so that they cost one reference.
final class RareMembershipFields: Sendable {
    /// The id's text when it is not one the store makes (`MembershipID.bits` is `nil`: an erased slot).
    let otherID: String?
    let revocation: Revocation?
    let lifecycle: LifecycleStorage?

    init(otherID: String?, revocation: Revocation?, lifecycle: LifecycleStorage?) {
        self.otherID = otherID
        self.revocation = revocation
        self.lifecycle = lifecycle
    }
}

/// Strings that repeat across memberships (product and plan ids: a store has a few dozen), each kept
/// once and named by its position, which never changes.
struct InternedNames: Sendable {
    private var names: [String] = []
    private var numbers: [String: Int32] = [:]

    subscript(number: Int32) -> String { names[Int(number)] }

    /// How many names have a number.
    var count: Int { names.count }

    /// The number of `name`, if it was ever interned.
    @inline(__always)
    func number(of name: String) -> Int32? { numbers[name] }

    mutating func intern(_ name: String) -> Int32 {
        if let number = numbers[name] { return number }
        let number = Int32(names.count)
        names.append(name)
        numbers[name] = number
        return number
    }
}

extension PurchaseSource {
    /// Its position in `allCases`, which `PackedMembership` stores in a byte (six cases: a few compares).
    static func code(of source: PurchaseSource) -> UInt8 {
        UInt8(allCases.firstIndex(of: source)!)
    }
}
