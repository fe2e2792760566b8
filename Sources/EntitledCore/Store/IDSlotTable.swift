import CPrefetch

/// A hash table from membership ids (their 64 bits) to slots: the store's id index.
///
/// Written by hand instead of `[UInt64: UInt32]` for the grant path and the log's replay, which each look
/// up or insert one id per membership: `perf` on a bulk load of grants (release build, 2 cores) put the
/// Dictionary's `find`, `_insert` and `updateValue` at about 8% of the server's CPU, nearly all of it SipHash
/// and the load of a bucket that is in memory, not in the cache. Here the hash is one multiply with a
/// per-process seed (the ids are random already; the seed keeps chosen ids from piling up), and a key and
/// its slot share one 12-byte entry, so a lookup fetches one cache line (the Dictionary's keys and values
/// are two arrays) at the Dictionary's 12 bytes per bucket. The entry can be prefetched before it is
/// needed (`prefetch`), which a Dictionary does not allow.
///
/// Open addressing with linear probing, at most 3/4 full; removal shifts the chain back, so no tombstones
/// pile up. The id 0 (all bits clear) marks an empty entry, so it is kept beside the table.
struct IDSlotTable: Sendable {
    /// An id's two halves and its slot; stride 12, so that the table costs what the Dictionary did.
    private struct Entry: Sendable {
        var low: UInt32
        var high: UInt32
        var slot: UInt32

        static let empty = Entry(low: 0, high: 0, slot: 0)

        init(low: UInt32, high: UInt32, slot: UInt32) {
            self.low = low
            self.high = high
            self.slot = slot
        }

        init(id: UInt64, slot: UInt32) {
            self.init(low: UInt32(truncatingIfNeeded: id), high: UInt32(truncatingIfNeeded: id >> 32), slot: slot)
        }

        var id: UInt64 { UInt64(high) << 32 | UInt64(low) }
        var isEmpty: Bool { low == 0 && high == 0 }
    }

    private var entries: [Entry] = []
    /// The slot of the id 0, which the entries cannot hold (it marks them empty).
    private var slotOfZero: UInt32?
    private(set) var count = 0

    init() {}

    subscript(id: UInt64) -> UInt32? {
        if id == 0 { return slotOfZero }
        guard count > 0 else { return nil }
        return entries.withUnsafeBufferPointer { entries -> UInt32? in
            let mask = entries.count - 1
            var index = Self.home(of: id, mask: mask)
            while true {
                let entry = entries[index]
                if entry.isEmpty { return nil }
                if entry.id == id { return entry.slot }
                index = (index + 1) & mask
            }
        }
    }

    /// Gives `id` the slot `slot` unless it has one, and returns the slot it had (`nil`: it had none and
    /// now has `slot`). One probe for both the lookup and the insert.
    mutating func insertIfAbsent(_ id: UInt64, slot: UInt32) -> UInt32? {
        if id == 0 {
            if let slotOfZero { return slotOfZero }
            slotOfZero = slot
            count += 1
            return nil
        }
        if (count + 1) * 4 > entries.count * 3 { rehash(into: max(16, entries.count * 2)) }
        let mask = entries.count - 1
        var index = Self.home(of: id, mask: mask)
        while true {
            let entry = entries[index]
            if entry.isEmpty { break }
            if entry.id == id { return entry.slot }
            index = (index + 1) & mask
        }
        entries[index] = Entry(id: id, slot: slot)
        count += 1
        return nil
    }

    /// Removes `id` and returns its slot, if it had one.
    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> UInt32? {
        if id == 0 {
            defer { if slotOfZero != nil { count -= 1 }; slotOfZero = nil }
            return slotOfZero
        }
        guard count > 0 else { return nil }
        let mask = entries.count - 1
        var index = Self.home(of: id, mask: mask)
        while true {
            let entry = entries[index]
            if entry.isEmpty { return nil }
            if entry.id == id { break }
            index = (index + 1) & mask
        }
        let slot = entries[index].slot
        removeEntry(at: index)
        return slot
    }

    /// Starts loading the entry where a lookup of `id` begins, so that a lookup or insert made a little
    /// later finds it in the cache. Only a hint: it changes nothing. `mutating` so that callers reach it
    /// through their state's address, as `StringSlotTable.prefetch` explains.
    @inline(__always)
    mutating func prefetch(_ id: UInt64) {
        guard !entries.isEmpty else { return }
        let index = Self.home(of: id, mask: entries.count - 1)
        entries.withUnsafeBufferPointer { entitled_prefetch($0.baseAddress! + index) }
    }

    /// Makes the table large enough for `count` ids without growing (a restart knows how many it loads).
    mutating func reserveCapacity(_ count: Int) {
        var size = max(16, entries.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > entries.count { rehash(into: size) }
    }

    // MARK: Probing

    private mutating func rehash(into size: Int) {
        let old = entries
        entries = HugePageArray.make(repeating: .empty, count: size)
        let mask = size - 1
        for entry in old where !entry.isEmpty {
            var index = Self.home(of: entry.id, mask: mask)
            while !entries[index].isEmpty { index = (index + 1) & mask }
            entries[index] = entry
        }
    }

    /// Empties entry `index` and moves back the entries after it whose chain passes over it, so that
    /// every id stays reachable from its home without markers of removed ones.
    private mutating func removeEntry(at index: Int) {
        let mask = entries.count - 1
        var hole = index
        var next = (index + 1) & mask
        while !entries[next].isEmpty {
            let home = Self.home(of: entries[next].id, mask: mask)
            // The entry may fill the hole when its home is not in the cyclic range (hole, next].
            if (hole - home) & mask < (next - home) & mask || home == hole {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = .empty
        count -= 1
    }

    // MARK: Hashing

    /// This process's multiplier: random and odd, so that which ids collide cannot be prepared in advance.
    private static let multiplier: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next() | 1
    }()

    @inline(__always)
    private static func home(of id: UInt64, mask: Int) -> Int {
        let product = id.multipliedFullWidth(by: multiplier)
        return Int(truncatingIfNeeded: product.high ^ product.low) & mask
    }
}
