/// The slots (`MembershipTable` positions) of one user's or one device's memberships, oldest first.
///
/// Almost every subject holds one membership, so the first slot is kept inline and only a second one
/// allocates an array: the index of 1M users then costs no allocation per user, and a check finds the
/// slot in the dictionary entry itself rather than behind another pointer.
struct SlotList: Sendable, Sequence {
    private var first: Int
    private var rest: [Int]?

    init(_ slot: Int) {
        first = slot
        rest = nil
    }

    init?(_ slots: some Collection<Int>) {
        guard let head = slots.first else { return nil }
        first = head
        let tail = Array(slots.dropFirst())
        rest = tail.isEmpty ? nil : tail
    }

    mutating func append(_ slot: Int) {
        if rest == nil { rest = [slot] } else { rest!.append(slot) }
    }

    mutating func append(contentsOf other: SlotList) {
        for slot in other { append(slot) }
    }

    var count: Int { 1 + (rest?.count ?? 0) }

    /// Calls `body` with each slot, oldest first, until it returns `false`; returns whether it never did.
    @inline(__always)
    func allSatisfy(_ body: (Int) -> Bool) -> Bool {
        guard body(first) else { return false }
        if let rest {
            for slot in rest where !body(slot) { return false }
        }
        return true
    }

    func makeIterator() -> IndexingIterator<[Int]> {
        ([first] + (rest ?? [])).makeIterator()
    }
}
