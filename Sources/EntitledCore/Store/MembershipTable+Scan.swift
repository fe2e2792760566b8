/// Going through a run of slots in place: how a listing of one source looks at thousands of slots per page
/// for the cost of reading a byte or two of each (`SourceFilter`), building only the memberships it takes.
extension MembershipTable {
    /// The slots from `start` up to `end` (excluded) whose packed membership `admits` takes, in order, at
    /// most `limit` of them; and the slot after the last one looked at (`end`, unless `limit` was reached
    /// first: then the slot after the last one taken).
    func slots(from start: Int, to end: Int, limit: Int, where admits: (PackedMembership) -> Bool) -> (slots: [Int], stoppedAt: Int) {
        var taken: [Int] = []
        var slot = start
        while slot < end {
            let chunkIndex = slot / Self.chunkSize
            let offset = slot % Self.chunkSize
            let stop = Swift.min(end - slot + offset, chunks[chunkIndex].count)
            let done = chunks[chunkIndex].withUnsafeBufferPointer { chunk -> Bool in
                for index in offset..<stop where admits(chunk[index]) {
                    taken.append(slot + index - offset)
                    if taken.count == limit {
                        slot += index - offset + 1
                        return true
                    }
                }
                slot += stop - offset
                return false
            }
            if done { break }
        }
        return (taken, slot)
    }

    /// Whether the slot holds an erased membership (`Membership.isErased`), without building it.
    func isErased(atSlot slot: Int) -> Bool {
        chunks[slot / Self.chunkSize][slot % Self.chunkSize].rare?.otherID != nil
    }
}
