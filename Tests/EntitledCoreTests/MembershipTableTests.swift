import Testing

@testable import EntitledCore

/// `MembershipTable` keeps memberships packed; what goes in must come out field for field.
@Suite struct MembershipTableTests {
    private static func time(_ milliseconds: Int64) -> Timestamp { Timestamp(millisecondsSinceEpoch: milliseconds) }

    /// Memberships with every field set, none set, and the rare parts (revocation, lifecycle, an id the
    /// store did not make), over every purchase source.
    static let variety: [Membership] = {
        var lifecycle = MembershipLifecycle.standard
        lifecycle.willRenew = false
        lifecycle.billingIssueDetectedAt = time(1_700_000_100_000)
        lifecycle.gracePeriodExpiresAt = time(1_700_000_900_000)
        lifecycle.appliedEventIDs = ["evt_1", "evt_2"]
        var memberships = [
            Membership(id: MembershipID(bits: 1), productId: "prod_pro", createdAt: time(1_700_000_000_000)),
            Membership(
                id: MembershipID(bits: .max), productId: "a product id far longer than fifteen bytes",
                planId: "plan_yearly", device: "device-7f3a-0000-long-identifier", user: "user_42",
                createdAt: time(-5), expiresAt: time(0), source: .appStore,
                revocation: Revocation(revokedAt: time(1_700_000_500_000), reason: "chargeback"), lifecycle: lifecycle
            ),
            Membership(id: MembershipID(rawValue: "imported-id"), productId: "prod_pro", planId: "plan_yearly", createdAt: time(7)),
            StoreState.erasedMembership,
        ]
        for (index, source) in PurchaseSource.allCases.enumerated() {
            memberships.append(
                Membership(
                    id: MembershipID(bits: UInt64(100 + index)), productId: "prod_\(index % 2)", device: "phone",
                    createdAt: time(Int64(index)), expiresAt: time(.max), source: source
                )
            )
        }
        return memberships
    }()

    @Test func everyFieldOfEveryKindOfMembershipReadsBackAsStored() {
        var table = MembershipTable()
        for membership in Self.variety { table.append(membership) }
        #expect(Array(table) == Self.variety)
        #expect(table.count == Self.variety.count)
    }

    @Test func aSlotOverwrittenWithOtherFieldsReadsBackTheNewOnes() {
        var table = MembershipTable()
        for membership in Self.variety { table.append(membership) }
        var changed = table[0]
        changed.revocation = Revocation(revokedAt: Self.time(9), reason: "refund")
        changed.planId = "plan_new"
        changed.expiresAt = nil
        table[0] = changed
        #expect(table[0] == changed)
        table[1] = Self.variety[0]
        #expect(table[1] == Self.variety[0])
        #expect(Array(table[2...]) == Array(Self.variety[2...]))
    }

    @Test func aCopyKeptBeforeAWriteStillReadsTheOldMemberships() {
        var table = MembershipTable()
        for bits in 1...5000 {
            table.append(Membership(id: MembershipID(bits: UInt64(bits)), productId: "prod_\(bits % 3)", createdAt: Self.time(Int64(bits))))
        }
        let kept = table
        var revoked = table[4500]
        revoked.revocation = Revocation(revokedAt: Self.time(1), reason: "manual")
        table[4500] = revoked
        table.append(Membership(id: MembershipID(bits: 9999), productId: "prod_new", createdAt: Self.time(1)))
        #expect(kept[4500].revocation == nil)
        #expect(kept.count == 5000)
        #expect(table[4500].revocation != nil)
        #expect(table[5000].productId == "prod_new")
    }
}
