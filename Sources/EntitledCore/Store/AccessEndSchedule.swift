import HeapModule

/// When each membership's access stops by itself (an expiry, a grace period's end, a pause), soonest first:
/// where the server's `expired` pushes come from, at a cost per ending, whatever the store holds.
///
/// Kept once for the whole store, not per watcher: a table of timers per watching connection made a
/// `watch` of every subject cost a copy of a million entries per pushed line (issue #44).
///
/// Two tiers, so that noting an end costs about the same for any store:
/// - `near`: a heap of the ends in the current and next minute (at most a few minutes' worth of entries);
/// - `later`: the others, as slots by minute, each minute's slots moved into `near` once that minute is next.
///
/// An entry is never removed when its membership's end moves (a renewal, an extension, a revocation, an
/// erasure): the new end is noted as another entry, and `takeDue` checks each entry against the
/// membership's access record as it is then, dropping those that no longer hold. A moved end thus costs
/// four bytes until its old minute comes.
struct AccessEndSchedule: Sendable {
    struct Entry: Comparable, Sendable {
        var at: Int64
        var slot: UInt32

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.at, lhs.slot) < (rhs.at, rhs.slot) }
    }

    static let millisecondsPerMinute: Int64 = 60_000

    private var near = Heap<Entry>()
    private var later: [Int64: [UInt32]] = [:]
    /// The minutes `later` holds, soonest first.
    private var laterMinutes = Heap<Int64>()
    /// Entries of this minute and the ones before go straight into `near`.
    private var nearThroughMinute = Int64.min
    /// The last entry taken: an end noted twice (moved away and back) is reported once.
    private var lastTaken: Entry?

    /// How many entries are held, stale ones included.
    private(set) var count = 0

    /// Notes that the membership at `slot` stops granting access at `at` (milliseconds since the epoch).
    mutating func note(slot: UInt32, endingAt at: Int64) {
        count += 1
        let minute = Self.minute(of: at)
        if minute <= nearThroughMinute {
            near.insert(Entry(at: at, slot: slot))
        } else if later[minute]?.append(slot) == nil {
            later[minute] = [slot]
            laterMinutes.insert(minute)
        }
    }

    /// When `takeDue` has something to do next (milliseconds since the epoch): the soonest end, or the
    /// moment the soonest minute of `later` must move into `near`; `nil` when nothing is scheduled.
    var nextDue: Int64? {
        let nearest = near.min?.at
        guard let minute = laterMinutes.min else { return nearest }
        // Moved one minute ahead of its ends, so that they are in order with the ends of `near`.
        let moveAt = (minute - 1) * Self.millisecondsPerMinute
        return nearest.map { min($0, moveAt) } ?? moveAt
    }

    /// The slots whose noted end is at or before `now` and still holds (`currentEnd` of the slot gives the
    /// end its access record has now, `nil` for none), each entry looked at once; at most `limit` entries
    /// are looked at, so that a moment when many ends fall costs a bounded time per call. `more` says
    /// whether entries were left for another call.
    mutating func takeDue(now: Int64, limit: Int, currentEnd: (UInt32) -> Int64?) -> (slots: [UInt32], more: Bool) {
        var budget = limit
        var slots: [UInt32] = []
        let throughMinute = Self.minute(of: now) + 1
        while let minute = laterMinutes.min, minute <= throughMinute {
            var moving = later.removeValue(forKey: minute) ?? []
            while let slot = moving.popLast() {
                guard budget > 0 else {
                    later[minute] = moving + [slot]
                    return (slots, true)
                }
                budget -= 1
                count -= 1
                // An end moved to another minute has its own entry there.
                guard let at = currentEnd(slot), Self.minute(of: at) == minute else { continue }
                near.insert(Entry(at: at, slot: slot))
                count += 1
            }
            laterMinutes.removeMin()
        }
        nearThroughMinute = max(nearThroughMinute, throughMinute)
        while let first = near.min, first.at <= now {
            guard budget > 0 else { return (slots, true) }
            budget -= 1
            count -= 1
            let entry = near.removeMin()
            guard entry != lastTaken else { continue }
            lastTaken = entry
            if currentEnd(entry.slot) == entry.at { slots.append(entry.slot) }
        }
        return (slots, false)
    }

    private static func minute(of milliseconds: Int64) -> Int64 {
        // Rounded down for times before 1970 too.
        milliseconds >= 0 ? milliseconds / millisecondsPerMinute : (milliseconds + 1) / millisecondsPerMinute - 1
    }
}
