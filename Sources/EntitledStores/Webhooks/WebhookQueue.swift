import Foundation

/// The messages an endpoint has read and not yet delivered, in the feed's order, each found again by its
/// serial number in constant time: a delivered one is marked done where it is, and the done ones at the
/// front are let go as the front moves on. (Removing each from an array, as delivered, cost a search and a
/// move of everything behind it: at thousands a second with a queue of thousands, most of the deliverer's
/// time.)
struct WebhookQueue {
    /// A message read and not yet delivered.
    struct Entry {
        let serial: UInt64
        var message: WebhookMessage
        var attempts = 0
        var firstTriedAt: Date?
        var notBefore: ContinuousClock.Instant?
        var inFlight = false
        var lastResult = ""
        /// Delivered or given up: it only waits for the front to pass it.
        var done = false
    }

    private var entries: [Entry] = []
    /// The index in `entries` of the first entry not done (or `entries.count`).
    private var head = 0
    /// The serial of `entries[0]`.
    private var firstSerial: UInt64 = 0
    private var nextSerial: UInt64 = 0
    /// Entries not done.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Adds `message` at the end; returns its serial.
    @discardableResult
    mutating func append(_ message: WebhookMessage) -> UInt64 {
        let serial = nextSerial
        nextSerial += 1
        if entries.isEmpty { firstSerial = serial }
        entries.append(Entry(serial: serial, message: message))
        count += 1
        return serial
    }

    /// The positions of the entries not done, oldest first.
    var positions: [Int] { (head..<entries.count).filter { !entries[$0].done } }

    /// The oldest entry not done.
    var first: Entry? { head < entries.count ? entries[head] : nil }

    /// The position of the entry `serial`, if it is still there and not done.
    func position(of serial: UInt64) -> Int? {
        guard serial >= firstSerial else { return nil }
        let index = Int(serial - firstSerial)
        return index < entries.count && !entries[index].done ? index : nil
    }

    subscript(position: Int) -> Entry {
        get { entries[position] }
        set { entries[position] = newValue }
    }

    /// Marks the entry at `position` done, and lets go of the done entries at the front.
    mutating func finish(at position: Int) {
        guard !entries[position].done else { return }
        entries[position].done = true
        count -= 1
        while head < entries.count, entries[head].done { head += 1 }
        // Drop the let-go front once it is most of the array, so that memory follows what is waiting.
        if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            firstSerial += UInt64(head)
            head = 0
        }
    }

    /// The position of the first entry not done at or after `position` (from the front when `nil`).
    func nextWaiting(from position: Int?) -> Int? {
        var index = max(position ?? head, head)
        while index < entries.count {
            if !entries[index].done { return index }
            index += 1
        }
        return nil
    }
}
