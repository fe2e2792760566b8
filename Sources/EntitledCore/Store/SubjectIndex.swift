/// The slots (`MembershipTable` positions) of each user's or device's memberships, oldest first.
///
/// Almost every subject holds one membership, so an entry is one 32-bit number: the slot itself, or, for
/// a subject with several, the position of its slot group. At 1M users the dictionary's values then cost
/// 4 bytes a bucket instead of a 16-byte list, with no allocation per user, and a check finds the slot in
/// the entry itself rather than behind another pointer.
struct SubjectIndex: Sendable {
    /// `>= 0`: the subject's one slot. `< 0`: `-(value + 1)` is the subject's position in `groups`.
    private var entries = StringSlotTable()
    private var groups: [[Int32]] = []
    /// Positions in `groups` no subject uses any more, for reuse.
    private var freeGroups: [Int] = []

    /// The most slots a store can hold: slots are kept as 32-bit numbers.
    static let slotLimit = Int(Int32.max)

    /// How many subjects have a slot.
    var count: Int { entries.count }

    /// Room for `count` subjects without growing.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
    }

    /// Whether `key` has any slot.
    func contains(_ key: String) -> Bool {
        entries[key] != nil
    }

    /// Starts loading what a lookup of the key spelled by `utf8` reads first (`StringSlotTable.prefetch`).
    @inline(__always)
    mutating func prefetch(utf8: UnsafeRawBufferPointer) {
        entries.prefetch(utf8: utf8)
    }

    /// Calls `body` with each slot of `key`, oldest first, until it returns `false`; returns whether it
    /// never did.
    @inline(__always)
    func allSlots(of key: String, satisfy body: (Int) -> Bool) -> Bool {
        guard let entry = entries[key] else { return true }
        if entry >= 0 { return body(Int(entry)) }
        for slot in groups[Int(-(entry + 1))] where !body(Int(slot)) { return false }
        return true
    }

    /// How many slots `key` has, without listing them.
    func count(of key: String) -> Int {
        guard let entry = entries[key] else { return 0 }
        return entry >= 0 ? 1 : groups[Int(-(entry + 1))].count
    }

    /// The slots of `key`, oldest first.
    func slots(of key: String) -> [Int] {
        var slots: [Int] = []
        _ = allSlots(of: key) { slots.append($0); return true }
        return slots
    }

    mutating func add(_ slot: Int, to key: String) {
        precondition(slot < Self.slotLimit, "a store holds at most \(Self.slotLimit) memberships")
        let slot = Int32(slot)
        guard let entry = entries.insertIfAbsent(key, slot) else { return }
        if entry < 0 {
            groups[Int(-(entry + 1))].append(slot)
            return
        }
        let group = [entry, slot]
        let position: Int
        if let free = freeGroups.popLast() {
            groups[free] = group
            position = free
        } else {
            groups.append(group)
            position = groups.count - 1
        }
        entries[key] = Int32(-(position + 1))
    }

    /// Removes `slot` from `key`'s slots, and `key` when it was its last (an erasure).
    mutating func remove(_ slot: Int, from key: String) {
        guard let entry = entries[key] else { return }
        if entry >= 0 {
            if Int(entry) == slot { entries[key] = nil }
            return
        }
        let position = Int(-(entry + 1))
        groups[position].removeAll { Int($0) == slot }
        switch groups[position].count {
        case 0:
            entries[key] = nil
            freeGroups.append(position)
        case 1:
            // Back to the one-slot form `add` makes, so that `add` can group it again.
            entries[key] = groups[position][0]
            groups[position] = []
            freeGroups.append(position)
        default:
            break
        }
    }

    /// Removes `key` and returns its slots, oldest first (`nil` if it had none).
    mutating func removeAll(for key: String) -> [Int]? {
        guard let entry = entries.removeValue(forKey: key) else { return nil }
        if entry >= 0 { return [Int(entry)] }
        let position = Int(-(entry + 1))
        let slots = groups[position].map(Int.init)
        groups[position] = []
        freeGroups.append(position)
        return slots
    }
}
