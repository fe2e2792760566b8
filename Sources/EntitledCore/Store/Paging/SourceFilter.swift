/// Which memberships a listing of one source takes (`EntitlementStore.membershipsPage(ofSource:...)`),
/// read from a membership as `MembershipTable` packs it, without building a `Membership` for the slots
/// it passes over.
struct SourceFilter {
    /// The source, as `PackedMembership.source` codes it.
    let source: UInt8
    /// Milliseconds; `nil` takes every membership of the source.
    let endedAfter: Int64?

    init(source: PurchaseSource, endedAfter: Timestamp?) {
        self.source = PurchaseSource.code(of: source)
        self.endedAfter = endedAfter?.millisecondsSinceEpoch
    }

    /// Whether `membership` is of the source, not erased, and (with `endedAfter`) may still have had
    /// access at or after it: lifetime and not revoked; or its `expiresAt` or grace period's end at or
    /// after it; or revoked at or after it. A revoked membership whose period reaches the moment is taken
    /// too: a refund the store reversed since (a missed `refund_reversal`) gives it back, which is what a
    /// reconciliation looks for.
    @inline(__always)
    func admits(_ membership: PackedMembership) -> Bool {
        guard membership.source == source else { return false }
        let rare = membership.rare
        guard rare?.otherID == nil else { return false }  // an erased slot: no id, nobody's
        guard let endedAfter else { return true }
        if membership.flags & PackedMembership.hasExpiry == 0 {
            if rare?.revocation == nil { return true }
        } else if membership.expiresAt >= endedAfter {
            return true
        }
        if let grace = rare?.lifecycle?.value.gracePeriodExpiresAt, grace.millisecondsSinceEpoch >= endedAfter { return true }
        if let revokedAt = rare?.revocation?.revokedAt, revokedAt.millisecondsSinceEpoch >= endedAfter { return true }
        return false
    }
}
