import HeapModule

/// When each membership's access stops by itself (an expiry, a grace period's end, a pause), soonest first:
/// where the server's `expired` pushes come from, at a cost per ending, whatever the store holds.
///
/// Kept once for the whole store, not per watcher: a table of timers per watching connection made a
/// `watch` of every subject cost a copy of a million entries per pushed line (issue #44).
///
/// Two tiers, so that noting an end costs about the same for any store, and holding one costs about four
/// bytes:
/// - `near`: a heap of the ends in the current and the next hour;
/// - `later`: the others, as slots by hour, each hour's slots moved into `near` once that hour is next.
///   Hours rather than minutes: a year of yearly subscriptions renewing at every minute would otherwise
///   keep half a million small arrays.
///
/// An entry is never removed when its membership's end moves (a renewal, an extension, a revocation, an
/// erasure): the new end is noted as another entry, and `takeDue` checks each entry against the
/// membership's access record as it is then, dropping those that no longer hold. A moved end thus costs
/// four bytes until its old hour comes.
struct AccessEndSchedule: Sendable {
    struct Entry: Comparable, Sendable {
        var at: Int64
        var slot: UInt32

        static func < (lhs: Entry, rhs: Entry) -> Bool { (lhs.at, lhs.slot) < (rhs.at, rhs.slot) }
    }

    static let millisecondsPerBucket: Int64 = 3_600_000

    private var near = Heap<Entry>()
    private var later: [Int64: [UInt32]] = [:]
    /// The hours `later` holds (as hours since the epoch), soonest first.
    private var laterBuckets = Heap<Int64>()
    /// Entries of this hour and the ones before go straight into `near`.
    private var nearThroughBucket = Int64.min
    /// The last entry taken: an end noted twice (moved away and back) is reported once.
    private var lastTaken: Entry?

    /// How many entries are held, stale ones included.
    private(set) var count = 0

    /// Notes that the membership at `slot` stops granting access at `at` (milliseconds since the epoch).
    mutating func note(slot: UInt32, endingAt at: Int64) {
        count += 1
        let bucket = Self.bucket(of: at)
        if bucket <= nearThroughBucket {
            near.insert(Entry(at: at, slot: slot))
        } else if later[bucket]?.append(slot) == nil {
            later[bucket] = [slot]
            laterBuckets.insert(bucket)
        }
    }

    /// When `takeDue` has something to do next (milliseconds since the epoch): the soonest end, or the
    /// moment the soonest hour of `later` must move into `near`; `nil` when nothing is scheduled.
    var nextDue: Int64? {
        let nearest = near.min?.at
        guard let bucket = laterBuckets.min else { return nearest }
        // Moved an hour ahead of its ends, so that they are in order with the ends of `near`.
        let moveAt = (bucket - 1) * Self.millisecondsPerBucket
        return nearest.map { min($0, moveAt) } ?? moveAt
    }

    /// The slots whose noted end is at or before `now` and still holds (`currentEnd` of the slot gives the
    /// end its access record has now, `nil` for none), each entry looked at once; at most `limit` entries
    /// are looked at, so that a moment when many ends fall costs a bounded time per call. `more` says
    /// whether entries were left for another call.
    mutating func takeDue(now: Int64, limit: Int, currentEnd: (UInt32) -> Int64?) -> (slots: [UInt32], more: Bool) {
        var budget = limit
        var slots: [UInt32] = []
        let throughBucket = Self.bucket(of: now) + 1
        while let bucket = laterBuckets.min, bucket <= throughBucket {
            var moving = later.removeValue(forKey: bucket) ?? []
            while let slot = moving.popLast() {
                guard budget > 0 else {
                    later[bucket] = moving + [slot]
                    return (slots, true)
                }
                budget -= 1
                count -= 1
                // An end moved to another hour has its own entry there.
                guard let at = currentEnd(slot), Self.bucket(of: at) == bucket else { continue }
                near.insert(Entry(at: at, slot: slot))
                count += 1
            }
            laterBuckets.removeMin()
        }
        nearThroughBucket = max(nearThroughBucket, throughBucket)
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

    /// The hour `milliseconds` falls in, counted from the epoch (rounded down for times before 1970 too).
    private static func bucket(of milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / millisecondsPerBucket : (milliseconds + 1) / millisecondsPerBucket - 1
    }
}
