import EntitledCore

/// The timer of `expired` pushes: the first loop takes the store's access ends as they fall due
/// (`EntitlementStore.takeAccessEnds`) and hands them to the `WatchHub`, which posts each to its
/// watchers' loops. One loop, so that each end is told once; a bounded number per turn, so that a moment
/// when thousands of subscriptions end together delays that loop's other clients by one batch at a time.
///
/// The store keeps the schedule of ends; this keeps only when the loop must next look at it. Loop thread
/// only. It holds no reference: the loop passes the store and the hub in, read from its own constants,
/// so that a turn's look at the timer retains nothing (a reference held here is retained around every
/// call made through it: measured, about 50 instructions a turn).
struct AccessEndTimer {
    /// The most scheduled ends one turn looks at.
    static let endsPerTurn = 1024

    /// Whether more ends were due than the last turn took.
    private var morePending = false
    /// The store's next access end as last read, and the monotonic moment (ms) it falls due by the
    /// store's clock then: a turn reads the clock again only when that moment has come or the next end
    /// moved.
    private var watched = (next: Int64.max, dueAt: UInt64.max)

    /// Takes the access ends due by `store`'s clock, and has their watchers told by `watchHub`. A turn
    /// with nothing due costs an atomic load and two comparisons: no clock read, no lock.
    @inline(__always)
    mutating func takeDueEnds(of store: EntitlementStore, tellingWatchersThrough watchHub: WatchHub, turnStarted: UInt64) {
        let next = store.nextAccessEndMilliseconds
        guard morePending || (next != .max && (next < watched.next || turnStarted >= watched.dueAt)) else { return }
        let now = store.now().millisecondsSinceEpoch
        guard morePending || next <= now else {
            // Looked at again within a second, for a clock stepped meanwhile.
            watched = (next, turnStarted + UInt64(min(next - now, 1000)))
            return
        }
        let ended = store.takeAccessEnds(
            through: Timestamp(millisecondsSinceEpoch: now), limit: Self.endsPerTurn, collecting: watchHub.hasWatchers
        )
        morePending = ended.more
        watched = (.max, .max)  // the next end is read again next turn
        if !ended.memberships.isEmpty { watchHub.publishAccessEnded(ended.memberships) }
    }

    /// How long the loop may sleep before an end is due (ms): at most a second, so that a clock stepped
    /// meanwhile is noticed within one.
    @inline(__always)
    func millisecondsUntilNextEnd(of store: EntitlementStore, turnStarted: UInt64) -> Int32 {
        if morePending { return 0 }
        let next = store.nextAccessEndMilliseconds
        // An end that came before the one watched (a write of another loop): looked at in the next turn.
        if next != .max, next < watched.next { return 0 }
        let until = watched.dueAt > turnStarted ? watched.dueAt - turnStarted : 0
        return Int32(min(until, 1000))
    }
}
