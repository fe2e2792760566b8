import Synchronization

extension EntitlementStore {
    /// The memberships whose access stopped by itself (an expiry, a grace period's end, a pause's start)
    /// at or before `now` since the last call: what `expired` pushes tell. A membership revoked, erased
    /// or given a later end before its end came is not among them.
    ///
    /// Costs a bounded time: at most `limit` scheduled ends are looked at (`AccessEnds.more` says whether
    /// more are due). With `collecting` false the ends are passed over and no membership is copied (nobody
    /// watches). An end is reported once, to one caller: call it from one place.
    public func takeAccessEnds(through now: Timestamp, limit: Int, collecting: Bool) -> AccessEnds {
        lock.withWriteLock {
            let taken = state.takeAccessEnds(through: now.millisecondsSinceEpoch, limit: limit)
            let memberships = collecting ? taken.slots.map { state.memberships[Int($0)] } : []
            let next = state.accessEnds.nextDue
            nextAccessEndHint.store(next ?? .max, ordering: .relaxed)
            return AccessEnds(memberships: memberships, more: taken.more, next: next.map(Timestamp.init(millisecondsSinceEpoch:)))
        }
    }

    /// About when `takeAccessEnds` has something to do next (milliseconds since the epoch), `Int64.max`
    /// for never: read without the lock, as often as a loop turns. Kept by every write, so it is at most
    /// as late as the write that moved it.
    public var nextAccessEndMilliseconds: Int64 {
        nextAccessEndHint.load(ordering: .relaxed)
    }

    /// Makes `nextAccessEndMilliseconds` no later than the schedule's next end; the caller holds the
    /// write lock and has just changed the state.
    func noteNextAccessEnd() {
        guard let next = state.accessEnds.nextDue, next < nextAccessEndHint.load(ordering: .relaxed) else { return }
        nextAccessEndHint.store(next, ordering: .relaxed)
    }
}

/// What `EntitlementStore.takeAccessEnds` found.
public struct AccessEnds: Sendable {
    /// The memberships whose access stopped, as they are now (empty when not collecting).
    public var memberships: [Membership]
    /// Whether more ends were due than the call looked at: call again soon.
    public var more: Bool
    /// When the next end is due, if any is scheduled.
    public var next: Timestamp?
}
