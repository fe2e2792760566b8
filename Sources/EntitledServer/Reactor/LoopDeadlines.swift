import HeapModule

/// What a loop must do at a moment of the monotonic clock (milliseconds), soonest first: one heap for
/// every kind of deadline the loop keeps (an expired `minSeq` wait, a lingering connection's end, paused
/// listeners, the idle and authentication sweep). Looked at once a turn, against the turn's coarse clock:
/// a deadline may fire up to one clock tick (about 4 ms) late, and costs a turn without one a comparison.
///
/// Entries are not removed when what they wait for is done early (a parked read answered, a lingering
/// connection closed): the action checks, when it comes due, whether it still applies. Each waits at most
/// its own bounded time (`--min-seq-wait`, 2 s of lingering), so stale entries cannot pile up.
/// (Access ends, for `expired` pushes, are kept apart, by the store (`AccessEndTimer.swift`): they
/// run by the store's clock, not the monotonic one.)
struct LoopDeadlines {
    enum Action {
        /// The `minSeq` read parked as `number` stops waiting: answered `stale` if still parked.
        case expireParkedRead(ServedConnection, number: UInt64)
        /// A drained connection whose client has not closed: closed now.
        case closeLingering(ServedConnection)
        /// Accepting paused for lack of descriptors: resumed.
        case resumeListeners
        /// The idle and authentication timeouts are looked at (`ServingLoop.closeIdleConnectionsIfDue`).
        case sweepConnections
    }

    private struct Entry: Comparable {
        let deadline: UInt64
        /// The order entries were added in: ties fire first in, first out.
        let order: UInt64
        let action: Action

        static func < (left: Entry, right: Entry) -> Bool { (left.deadline, left.order) < (right.deadline, right.order) }
        static func == (left: Entry, right: Entry) -> Bool { left.deadline == right.deadline && left.order == right.order }
    }

    private var heap = Heap<Entry>()
    private var added: UInt64 = 0

    /// The soonest deadline, if any.
    var soonest: UInt64? { heap.min?.deadline }

    mutating func add(_ action: Action, at deadline: UInt64) {
        added &+= 1
        heap.insert(Entry(deadline: deadline, order: added, action: action))
    }

    /// Takes off the soonest action due by `now`; `nil` when none is.
    mutating func nextDue(by now: UInt64) -> Action? {
        guard let first = heap.min, first.deadline <= now else { return nil }
        return heap.removeMin().action
    }
}
