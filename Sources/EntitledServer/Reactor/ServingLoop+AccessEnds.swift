import EntitledCore

/// `expired` pushes: the first loop takes the store's access ends as they come
/// (`EntitlementStore.takeAccessEnds`) and hands them to the `WatchHub`, which posts each to its watchers'
/// loops. One loop, so that each end is told once; a bounded number per turn, so that a moment when
/// thousands of subscriptions end together delays that loop's other clients by one batch at a time.
extension ServingLoop {
    /// The most scheduled ends one turn looks at.
    static let accessEndsPerTurn = 1024

    /// Whether this loop takes the store's access ends.
    private var takesAccessEnds: Bool { index == 0 }

    /// Takes the access ends due by the store's clock, and has their watchers told. A turn with nothing
    /// due costs an atomic load and two comparisons: no clock read, no lock.
    func takeDueAccessEnds() {
        guard takesAccessEnds else { return }
        let store = context.processor.store
        let next = store.nextAccessEndMilliseconds
        guard accessEndsPending || (next != .max && (next < accessEndWatch.next || turnStarted >= accessEndWatch.dueAt)) else { return }
        let now = store.now().millisecondsSinceEpoch
        guard accessEndsPending || next <= now else {
            // Looked at again within a second, for a clock stepped meanwhile.
            accessEndWatch = (next, turnStarted + UInt64(min(next - now, 1000)))
            return
        }
        let hub = context.processor.watchHub
        let ended = store.takeAccessEnds(
            through: Timestamp(millisecondsSinceEpoch: now), limit: Self.accessEndsPerTurn, collecting: hub.hasWatchers
        )
        accessEndsPending = ended.more
        accessEndWatch = (.max, .max)  // the next end is read again next turn
        if !ended.memberships.isEmpty { hub.publishAccessEnded(ended.memberships) }
    }

    /// How long this loop may sleep before an access end is due, if it takes them: at most a second, so
    /// that a clock stepped meanwhile is noticed within one.
    func millisecondsUntilNextAccessEnd() -> Int32? {
        guard takesAccessEnds else { return nil }
        if accessEndsPending { return 0 }
        let next = context.processor.store.nextAccessEndMilliseconds
        // An end that came before the one watched (a write of another loop): looked at in the next turn.
        if next != .max, next < accessEndWatch.next { return 0 }
        let until = accessEndWatch.dueAt > turnStarted ? accessEndWatch.dueAt - turnStarted : 0
        return Int32(min(until, 1000))
    }
}
