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

    /// Takes the access ends due by the store's clock, and has their watchers told.
    func takeDueAccessEnds() {
        guard takesAccessEnds else { return }
        let store = context.processor.store
        let next = store.nextAccessEndMilliseconds
        guard next != .max || accessEndsPending else { return }
        let now = store.now()
        guard accessEndsPending || next <= now.millisecondsSinceEpoch else { return }
        let hub = context.processor.watchHub
        let ended = store.takeAccessEnds(through: now, limit: Self.accessEndsPerTurn, collecting: hub.hasWatchers)
        accessEndsPending = ended.more
        if !ended.memberships.isEmpty { hub.publishAccessEnded(ended.memberships) }
    }

    /// How long this loop may sleep before an access end is due, if it takes them. At most a second:
    /// by the store's clock, which may be stepped, and an end scheduled by another loop's write meanwhile
    /// is seen within it.
    func millisecondsUntilNextAccessEnd() -> Int32? {
        guard takesAccessEnds else { return nil }
        if accessEndsPending { return 0 }
        let next = context.processor.store.nextAccessEndMilliseconds
        guard next != .max else { return 1000 }
        let until = next - context.processor.store.now().millisecondsSinceEpoch
        return Int32(max(0, min(until, 1000)))
    }
}
