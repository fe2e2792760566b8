/// Where a listing of one source's memberships (`EntitlementStore.membershipsPage(ofSource:...)`) stopped:
/// after slot `slot` of the store's slot numbering `numbering`, the last membership looked at not erased
/// being `anchor`.
///
/// Written on the wire as `<numbering, hex>.<slot>.<anchor id or ->`, which clients pass back unchanged.
/// Slots are creation order, the same on every node that applied the same changes, but renumbered when
/// a store is loaded from a snapshot that left erased memberships out; `numbering` tells whether this
/// store numbers its slots as the one that gave the cursor did. When it does, the listing goes on exactly
/// after `slot`, however many erased slots the page before ended on. When it does not (another node of
/// a cluster, a restart, a replica loaded again), it goes on after `anchor`'s slot here: every slot the
/// page before looked at after the anchor was erased, so none is lost (erased slots this store still
/// holds are looked at again, and skipped).
public struct SourceCursor: Hashable, Sendable {
    /// The numbering of the slots (`StoreState.slotNumbering`) of the store that gave it.
    public var numbering: UInt64
    /// The last slot the page looked at: the next page starts after it.
    public var slot: Int
    /// The last membership not erased at or before `slot`; `nil` when every slot up to `slot` was erased.
    public var anchor: MembershipID?

    public init(numbering: UInt64, slot: Int, anchor: MembershipID?) {
        self.numbering = numbering
        self.slot = slot
        self.anchor = anchor
    }

    /// The cursor as written on the wire.
    public var text: String {
        "\(String(numbering, radix: 16)).\(slot).\(anchor?.rawValue ?? "-")"
    }

    /// The cursor `text` spells, or `nil` when it is not one this server writes.
    public init?(text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, (1...16).contains(parts[0].count), let numbering = UInt64(parts[0], radix: 16),
            parts[0].allSatisfy({ $0.isHexDigit && !$0.isUppercase }), let slot = UInt32(parts[1]), String(slot) == parts[1]
        else { return nil }
        var anchor: MembershipID?
        if parts[2] != "-" {
            let id = MembershipID(rawValue: String(parts[2]))
            guard id.bits != nil else { return nil }
            anchor = id
        }
        self.init(numbering: numbering, slot: Int(slot), anchor: anchor)
    }
}

/// One page of a source's memberships, oldest (first created) first.
public struct SourcePage: Sendable {
    /// At most the page's limit; fewer, even none, when the page looked at as many slots as one may.
    public var memberships: [Membership]
    /// Where the next page starts (its request's `after`); `nil` once the page reached the store's last
    /// membership.
    public var next: SourceCursor?

    public init(memberships: [Membership], next: SourceCursor?) {
        self.memberships = memberships
        self.next = next
    }
}
