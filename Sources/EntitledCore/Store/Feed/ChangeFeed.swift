/// The change feed's index: which membership each change touched, in the order of the changes, so that
/// "every change after number N" is found without going through the store.
///
/// What a change did is not kept here: the store keeps every membership's revisions for its audit trail
/// anyway (`MembershipRevision`), and a feed item is read from them (`StoreState+Feed.swift`). An entry
/// is the change's number and the membership's id, 16 bytes. Catalog changes and erasures need no entry:
/// the store keeps them in order already (`catalogRevisions`, `erasures`); an erasure's membership ids,
/// which nothing else keeps, are here (`erasures`).
///
/// Entries are kept in chunks, like `MembershipTable`, so that a snapshot holding a copy costs the next
/// change one chunk's copy, not the whole index's; and so that retention lets go of a whole chunk at once.
/// Erasure takes nothing out: an erased membership's id no longer leads to a slot, so its entries are
/// passed over when read, and left out of the next snapshot (`StoreImage.withoutErasedMemberships()`).
public struct ChangeFeed: Sendable {
    /// How many entries a chunk holds, at most.
    public static let chunkSize = 4096

    /// One membership touched by one change. A change that touched several (a claim) has one entry each,
    /// next to each other.
    package struct Entry: Hashable, Sendable {
        package var sequence: UInt64
        /// The membership's id (`MembershipID.bits`).
        package var membership: UInt64

        package init(sequence: UInt64, membership: UInt64) {
            self.sequence = sequence
            self.membership = membership
        }
    }

    /// Consecutive entries, and when the newest of them was recorded (for retention by age).
    package struct Chunk: Sendable {
        package var entries: [Entry]
        /// Milliseconds since the epoch.
        package var newestTime: Int64

        package init(entries: [Entry], newestTime: Int64) {
            self.entries = entries
            self.newestTime = newestTime
        }
    }

    /// Oldest first; never an empty one.
    package private(set) var chunks: [Chunk] = []
    /// Every change numbered `horizon` or later is in the feed: the oldest `after` a read may give is
    /// `horizon - 1`.
    package private(set) var horizon: UInt64
    /// What each erasure in the feed did to memberships, by the erasure's number: its item names them, so
    /// that a copy of the data can do the same.
    package private(set) var erasures: [UInt64: ErasedMemberships] = [:]
    /// Numbers that name no change: the numbering jumped over them (a cluster's database after a failover
    /// that lost changes, `EntitlementStore.skipNumbers`). A reader who was told of a change numbered
    /// in one saw a change that was lost, and must start again from a full copy.
    package private(set) var skipped: [ClosedRange<UInt64>] = []
    /// How many entries the chunks hold.
    package private(set) var count = 0

    /// An empty feed that holds every change from `horizon` on: 1 for a new store, or the change after a
    /// snapshot written before the feed existed.
    package init(horizon: UInt64 = 1) {
        self.horizon = horizon
    }

    /// A feed read back from a snapshot.
    package init(horizon: UInt64, chunks: [Chunk], erasures: [UInt64: ErasedMemberships], skipped: [ClosedRange<UInt64>]) {
        self.horizon = horizon
        self.skipped = skipped
        self.chunks = chunks.filter { !$0.entries.isEmpty }
        self.erasures = erasures
        self.count = self.chunks.reduce(0) { $0 + $1.entries.count }
    }

    /// Notes that change `sequence`, recorded at `time` (milliseconds), touched `membership`; with
    /// `retention`, lets go of what it no longer keeps once a chunk fills up.
    mutating func append(sequence: UInt64, membership: UInt64, at time: Int64, retention: FeedRetention) {
        if let last = chunks.indices.last, chunks[last].entries.count < Self.chunkSize {
            chunks[last].entries.append(Entry(sequence: sequence, membership: membership))
            chunks[last].newestTime = max(chunks[last].newestTime, time)
        } else {
            var entries: [Entry] = []
            entries.reserveCapacity(Self.chunkSize)
            entries.append(Entry(sequence: sequence, membership: membership))
            chunks.append(Chunk(entries: entries, newestTime: time))
            // Checked as a chunk starts: at most once every `chunkSize` changes.
            release(beyond: retention, now: time)
        }
        count += 1
    }

    /// Notes what an erasure (change `sequence`) did to memberships.
    mutating func noteErasure(sequence: UInt64, _ memberships: ErasedMemberships) {
        guard !memberships.erased.isEmpty || !memberships.detached.isEmpty else { return }
        erasures[sequence] = memberships
    }

    /// Lets go of the oldest chunks that `retention` no longer keeps at `now`; never the newest chunk.
    mutating func release(beyond retention: FeedRetention, now: Int64) {
        let cutoff = retention.ageMilliseconds.map { now - $0 } ?? .min
        var released = 0
        while released < chunks.count - 1 {
            let chunk = chunks[released]
            guard chunk.newestTime < cutoff || count - chunk.entries.count >= retention.changes else { break }
            count -= chunk.entries.count
            horizon = max(horizon, chunk.entries.last!.sequence + 1)
            released += 1
        }
        guard released > 0 else { return }
        chunks.removeFirst(released)
        erasures = erasures.filter { $0.key >= horizon }
    }

    /// Notes numbers the numbering passed over (`skipped`).
    mutating func noteSkipped(_ numbers: ClosedRange<UInt64>) {
        skipped.append(numbers)
    }

    /// The skipped numbers that hold `sequence`, if any. The last of a range is where the numbering
    /// resumed (a cluster's mark), which no lost change had: a reader who read up to it read nothing lost.
    func skippedNumbers(holding sequence: UInt64) -> ClosedRange<UInt64>? {
        skipped.last { $0.lowerBound <= sequence && sequence < $0.upperBound }
    }

    /// Where the first entry after change `sequence` is: a chunk and an index in it, or the end
    /// (`chunks.count`, 0).
    func position(after sequence: UInt64) -> (chunk: Int, index: Int) {
        // The first chunk whose newest entry is after `sequence`, then the first entry in it.
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle].entries.last!.sequence > sequence { high = middle } else { low = middle + 1 }
        }
        guard low < chunks.count else { return (chunks.count, 0) }
        let entries = chunks[low].entries
        var first = 0
        var last = entries.count
        while first < last {
            let middle = (first + last) / 2
            if entries[middle].sequence > sequence { last = middle } else { first = middle + 1 }
        }
        return (low, first)
    }

    /// The entry at `position`, if it is not the end.
    func entry(at position: (chunk: Int, index: Int)) -> Entry? {
        position.chunk < chunks.count ? chunks[position.chunk].entries[position.index] : nil
    }

    /// The position after `position`.
    func position(following position: (chunk: Int, index: Int)) -> (chunk: Int, index: Int) {
        position.index + 1 < chunks[position.chunk].entries.count ? (position.chunk, position.index + 1) : (position.chunk + 1, 0)
    }

    /// This feed without the entries of `erased` memberships (and without chunks left empty): what a
    /// snapshot keeps, so that no file names an erased membership beyond its erasure's own item.
    package func withoutEntries(of erased: Set<UInt64>) -> ChangeFeed {
        guard !erased.isEmpty else { return self }
        let kept = chunks.map { chunk in
            Chunk(entries: chunk.entries.filter { !erased.contains($0.membership) }, newestTime: chunk.newestTime)
        }
        return ChangeFeed(horizon: horizon, chunks: kept, erasures: erasures, skipped: skipped)
    }

    /// The ids of every membership an erasure in the feed erased.
    package var erasedIDs: Set<UInt64> { Set(erasures.values.lazy.flatMap(\.erased)) }
}

/// What one erasure did to memberships, by their ids (`MembershipID.bits`).
package struct ErasedMemberships: Hashable, Sendable {
    /// Erased whole: the person's own, and the unclaimed guest purchases of their device.
    package var erased: [UInt64]
    /// Other users' memberships bought on the erased device: they stay, without the device.
    package var detached: [UInt64]

    package init(erased: [UInt64], detached: [UInt64]) {
        self.erased = erased
        self.detached = detached
    }
}
