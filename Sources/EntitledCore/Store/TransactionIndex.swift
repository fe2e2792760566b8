/// The slots of the memberships that hold each store transaction id: what finds a membership by the
/// `transactionId` or `originalTransactionId` a store reports (`memberships`, and the receivers of the
/// stores' notifications, which know a purchase only by its transaction).
///
/// Nearly every id belongs to one membership, so the first slot of each id is kept in a plain dictionary
/// and only the rare others (the same original transaction granted twice, before the transfer rule) in a
/// second one: a membership with transactions pays one entry per id, not an array each.
struct TransactionIndex: Sendable {
    private var firstSlot: [String: UInt32] = [:]
    private var laterSlots: [String: [UInt32]] = [:]

    /// How many ids the index holds.
    var count: Int { firstSlot.count }

    /// Records that the membership at `slot` holds `id`; recording it again changes nothing.
    mutating func add(_ id: String, slot: UInt32) {
        guard let first = firstSlot[id] else {
            firstSlot[id] = slot
            return
        }
        guard first != slot else { return }
        laterSlots[id, default: []].appendIfAbsent(slot)
    }

    /// Forgets that the membership at `slot` holds `id`.
    mutating func remove(_ id: String, slot: UInt32) {
        if firstSlot[id] == slot {
            if var later = laterSlots[id], !later.isEmpty {
                firstSlot[id] = later.removeFirst()
                laterSlots[id] = later.isEmpty ? nil : later
            } else {
                firstSlot[id] = nil
            }
        } else if var later = laterSlots[id], let index = later.firstIndex(of: slot) {
            later.remove(at: index)
            laterSlots[id] = later.isEmpty ? nil : later
        }
    }

    /// The slots of the memberships that hold `id`, oldest first.
    func slots(of id: String) -> [Int] {
        guard let first = firstSlot[id] else { return [] }
        guard let later = laterSlots[id] else { return [Int(first)] }
        return ([first] + later).map(Int.init).sorted()
    }
}

extension Array where Element == UInt32 {
    fileprivate mutating func appendIfAbsent(_ slot: UInt32) {
        if !contains(slot) { append(slot) }
    }
}
