extension StoreState {
    /// Notes when the membership at `slot` stops granting access by itself, if it grants access and its
    /// access stops at a known time after `moment` (the change's): an end already past when it was
    /// recorded was the change's own doing, told with the change.
    mutating func scheduleAccessEnd(ofSlot slot: Int, after moment: Timestamp) {
        let record = accessRecord(atSlot: slot)
        guard record.isActive(at: moment.millisecondsSinceEpoch), record.expiresAt != .max else { return }
        accessEnds.note(slot: UInt32(slot), endingAt: record.expiresAt)
    }

    /// Notes the end of every membership that grants access at `moment` and stops at a known later time:
    /// a store just loaded, whose ends before `moment` were missed by nobody.
    mutating func scheduleAccessEnds(after moment: Timestamp) {
        let milliseconds = moment.millisecondsSinceEpoch
        for slot in 0..<memberships.count {
            let record = accessRecord(atSlot: slot)
            guard record.isActive(at: milliseconds), record.expiresAt != .max else { continue }
            accessEnds.note(slot: UInt32(slot), endingAt: record.expiresAt)
        }
    }

    /// The memberships whose access stopped by itself at or before `now` since the last call, and still
    /// stands stopped there (not revoked, not moved); see `AccessEndSchedule.takeDue`.
    mutating func takeAccessEnds(through now: Int64, limit: Int) -> (slots: [UInt32], more: Bool) {
        // Taken out while it runs, so that it is changed in place while the closure reads the access table.
        var schedule = AccessEndSchedule()
        swap(&schedule, &accessEnds)
        defer { swap(&schedule, &accessEnds) }
        return schedule.takeDue(now: now, limit: limit) { slot in
            let record = accessRecord(atSlot: Int(slot))
            return record.isRevoked || record.expiresAt == .max ? nil : record.expiresAt
        }
    }
}
