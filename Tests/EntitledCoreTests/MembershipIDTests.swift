import Testing

@testable import EntitledCore

@Suite struct MembershipIDTests {
    static let base32 = Set("0123456789abcdefghjkmnpqrstvwxyz")

    @Test func aRandomIDIsMemPrefixAndThirteenBase32Characters() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let id = MembershipID.random(using: &generator).rawValue
            #expect(id.hasPrefix("mem_"))
            let suffix = id.dropFirst(4)
            #expect(suffix.count == 13)
            #expect(suffix.allSatisfy { Self.base32.contains($0) }, "\(id)")
        }
    }

    @Test func twoRandomIDsDiffer() throws {
        var generator = SystemRandomNumberGenerator()
        #expect(MembershipID.random(using: &generator) != MembershipID.random(using: &generator))
    }

    @Test func grantedMembershipsGetDistinctMemIDs() throws {
        let store = makeStore()
        let ids = (0..<50).map { _ in store.buy("prod_a", as: .user("alice")).id }
        #expect(Set(ids).count == 50)
        #expect(ids.allSatisfy { $0.rawValue.hasPrefix(MembershipID.prefix) && $0.rawValue.utf8.count == 17 })
    }
}
