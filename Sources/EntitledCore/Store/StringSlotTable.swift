import CPrefetch

/// A hash table from strings (user and device ids) to 32-bit numbers: what `SubjectIndex` keeps.
///
/// Written by hand instead of `[String: Int32]`, because a check looks a subject up here first and
/// `Dictionary` cost the most of its steps: measured with `perf` (50 connections pipelining 16 checks
/// against 100,000 users, release build, 2 cores), its `find` and `Hasher` (SipHash, seeded per call) were
/// 11 to 12% of the server's CPU per check, against 5.7% for the rest of the store's check. Here a key,
/// its number and a tag of its hash share one 24-byte entry (one cache line fetched per lookup rather
/// than one in the keys' array and one in the values'), and the hash is a folded multiply seeded once per
/// process (foldhash's construction) rather than SipHash seeded on every call. Afterwards the lookup was
/// 9.3% of that load's CPU, nearly all of it the load of the entry (`perf annotate`), which
/// `EntitlementStore.prefetchingUsers` then overlaps.
///
/// The seed is random per process, so which ids collide cannot be chosen from outside: a client cannot
/// send ids that all land in one bucket chain. Open addressing with linear probing, at most 3/4 full;
/// removal shifts the chain back, so no tombstones pile up.
struct StringSlotTable: Sendable {
    private struct Entry: Sendable {
        var key: String
        var value: Int32
        /// The high half of the key's hash with the lowest bit set; 0 marks an empty entry.
        var tag: UInt32

        static let empty = Entry(key: "", value: 0, tag: 0)
    }

    private var entries: [Entry] = []
    private(set) var count = 0

    init() {}

    subscript(key: String) -> Int32? {
        get { find(key).map { entries[$0].value } }
        set {
            if let newValue { insert(key, newValue) } else { _ = removeValue(forKey: key) }
        }
    }

    /// Gives `key` the number `value` unless it has one, and returns the number it had (`nil`: it had none
    /// and now has `value`). One hash and one probe for both the lookup and the insert: a grant of a new
    /// user's membership asks this once.
    mutating func insertIfAbsent(_ key: String, _ value: Int32) -> Int32? {
        if (count + 1) * 4 > entries.count * 3 { grow() }
        let hash = Self.hash(key)
        let tag = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = entries.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entryTag = entries[index].tag
            if entryTag == 0 { break }
            if entryTag == tag, entries[index].key == key { return entries[index].value }
            index = (index + 1) & mask
        }
        entries[index] = Entry(key: key, value: value, tag: tag)
        count += 1
        return nil
    }

    /// Removes `key` and returns its number, if it had one.
    mutating func removeValue(forKey key: String) -> Int32? {
        guard let index = find(key) else { return nil }
        let value = entries[index].value
        removeEntry(at: index)
        return value
    }

    /// Starts loading the entry where a lookup of the key spelled by `utf8` begins, so that a lookup
    /// made a little later finds it in the cache. Only a hint: it changes nothing.
    /// `mutating` only so that callers reach it through their state's address: a non-mutating call on a
    /// table inside `StoreState` copied (retained and released) its arrays on every call.
    @inline(__always)
    mutating func prefetch(utf8: UnsafeRawBufferPointer) {
        guard count > 0 else { return }
        let index = Int(truncatingIfNeeded: Self.hash(utf8)) & (entries.count - 1)
        entries.withUnsafeBufferPointer { entitled_prefetch($0.baseAddress! + index) }
    }

    // MARK: Probing

    @inline(__always)
    private func find(_ key: String) -> Int? {
        guard count > 0 else { return nil }
        let hash = Self.hash(key)
        let tag = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = entries.count - 1
        return entries.withUnsafeBufferPointer { entries -> Int? in
            var index = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entryTag = entries[index].tag
                if entryTag == 0 { return nil }
                if entryTag == tag, entries[index].key == key { return index }
                index = (index + 1) & mask
            }
        }
    }

    private mutating func insert(_ key: String, _ value: Int32) {
        if let index = find(key) {
            entries[index].value = value
            return
        }
        if (count + 1) * 4 > entries.count * 3 { grow() }
        place(Entry(key: key, value: value, tag: 0), hash: Self.hash(key))
        count += 1
    }

    /// Puts `entry` (a key not in the table) in the first empty entry of its chain.
    private mutating func place(_ entry: Entry, hash: UInt64) {
        var entry = entry
        entry.tag = UInt32(truncatingIfNeeded: hash >> 32) | 1
        let mask = entries.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while entries[index].tag != 0 { index = (index + 1) & mask }
        entries[index] = entry
    }

    private mutating func grow() {
        rehash(into: max(16, entries.count * 2))
    }

    /// Makes the table large enough for `count` keys without growing (a restart knows how many it loads).
    mutating func reserveCapacity(_ count: Int) {
        var size = max(16, entries.count)
        while count * 4 > size * 3 { size *= 2 }
        if size > entries.count { rehash(into: size) }
    }

    private mutating func rehash(into size: Int) {
        let old = entries
        entries = HugePageArray.make(repeating: .empty, count: size)
        for entry in old where entry.tag != 0 { place(entry, hash: Self.hash(entry.key)) }
    }

    /// Empties entry `index` and moves back the entries after it whose chain passes over it, so that
    /// every key stays reachable from its home without markers of removed ones.
    private mutating func removeEntry(at index: Int) {
        let mask = entries.count - 1
        var hole = index
        var next = (index + 1) & mask
        while entries[next].tag != 0 {
            let home = Int(truncatingIfNeeded: Self.hash(entries[next].key)) & mask
            // The entry may fill the hole when its home is not in the cyclic range (hole, next].
            let distanceToNext = (next - home) & mask
            let distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext || home == hole {
                entries[hole] = entries[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        entries[hole] = .empty
        count -= 1
    }

    // MARK: Hashing

    /// This process's seed: random, so that colliding ids cannot be prepared in advance.
    private static let seed: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next() | 1)
    }()

    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @inline(__always)
    static func hash(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let (seed, multiplier) = seed
        var state = seed ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            state = fold(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), multiplier)
            offset += 8
        }
        if offset < bytes.count {
            var last: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count {
                last |= UInt64(bytes[offset]) << shift
                shift += 8
                offset += 1
            }
            state = fold(state ^ last ^ 0x8000_0000_0000_0000, multiplier)
        }
        return fold(state ^ (state >> 29), multiplier ^ 0x9E37_79B9_7F4A_7C15)
    }
}
