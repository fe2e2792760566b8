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

@Suite struct MembershipIDTextTests {
    @Test func anIDReadBackFromItsTextIsTheSameID() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<1000 {
            let id = MembershipID.random(using: &generator)
            let read = MembershipID(rawValue: id.rawValue)
            #expect(read == id)
            #expect(read.bits == id.bits)
            #expect(read.rawValue == id.rawValue)
        }
        #expect(MembershipID(bits: 0).rawValue == "mem_0000000000000")
        #expect(MembershipID(bits: .max).rawValue == "mem_fzzzzzzzzzzzz")
    }

    @Test func theUTF8GivenToEncodersIsTheText() {
        var generator = SystemRandomNumberGenerator()
        let ids = (0..<100).map { _ in MembershipID.random(using: &generator) }
            + [MembershipID(bits: 0), MembershipID(bits: .max), MembershipID(rawValue: "not an id ✓"), MembershipID(rawValue: "")]
        for id in ids {
            var text = ""
            id.withUTF8 { text = String(decoding: $0, as: UTF8.self) }
            #expect(text == id.rawValue)
            #expect(id.utf8Count == id.rawValue.utf8.count)
        }
    }

    @Test(arguments: ["", "mem_", "mem_0k3n5q8r2t4v", "mem_0k3n5q8r2t4v67", "MEM_0k3n5q8r2t4v6", "mem_0k3n5q8r2t4vi", "mem_gzzzzzzzzzzzz", "mem_0k3n5q8r2t4vé"])
    func textThatIsNotACanonicalIDIsKeptVerbatimAndMatchesNoRealID(text: String) throws {
        let id = MembershipID(rawValue: text)
        #expect(id.bits == nil)
        #expect(id.rawValue == text)
        #expect(id == MembershipID(rawValue: text))
    }
}
