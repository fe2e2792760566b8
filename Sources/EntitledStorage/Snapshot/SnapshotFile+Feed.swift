import EntitledCore

/// The change feed's section of a snapshot (version 7 on, Protocol/STORAGE.md): the index of which
/// membership each change touched (`ChangeFeed`), so that the feed reaches as far back after a restart as
/// before it. A snapshot of an earlier version has none: the feed then starts after the snapshot.
extension SnapshotFile {
    /// Writes the feed's section: u64 horizon; u32 count of skipped ranges, each u64 first and u64 last;
    /// u64 count of erasures, each u64 sequence, u32 count and u64 ids erased, u32 count and u64 ids
    /// detached; u64 count of chunks, each i64 newest time, u32 count and (u64 sequence, u64 id) entries.
    static func writeFeed(_ feed: ChangeFeed, into chunk: inout BinaryWriter, emit: ([UInt8]) throws(StorageError) -> Void) throws(StorageError) {
        chunk.write(feed.horizon)
        chunk.write(UInt32(feed.skipped.count))
        for range in feed.skipped {
            chunk.write(range.lowerBound)
            chunk.write(range.upperBound)
        }
        chunk.write(UInt64(feed.erasures.count))
        for (sequence, memberships) in feed.erasures.sorted(by: { $0.key < $1.key }) {
            chunk.write(sequence)
            for ids in [memberships.erased, memberships.detached] {
                chunk.write(UInt32(ids.count))
                for id in ids { chunk.write(id) }
            }
        }
        chunk.write(UInt64(feed.chunks.count))
        for feedChunk in feed.chunks {
            chunk.write(feedChunk.newestTime)
            chunk.write(UInt32(feedChunk.entries.count))
            for entry in feedChunk.entries {
                chunk.write(entry.sequence)
                chunk.write(entry.membership)
            }
            if chunk.bytes.count >= 1 << 20 { try emit(chunk.bytes); chunk.bytes.removeAll(keepingCapacity: true) }
        }
    }

    /// Reads the feed's section, checking that its changes are in order and none is after the snapshot.
    static func readFeed(_ reader: inout BinaryReader, sequence: UInt64) throws(BinaryReader.Malformed) -> ChangeFeed {
        let horizonOffset = reader.offset
        let horizon = try reader.readUInt64()
        guard horizon >= 1, horizon <= sequence + 1 else {
            throw BinaryReader.Malformed(offset: horizonOffset, problem: "the feed starts at change \(horizon), after the snapshot's change \(sequence)")
        }
        var skipped: [ClosedRange<UInt64>] = []
        for _ in 0..<(try reader.readCount(minimumBytesEach: 16)) {
            let start = reader.offset
            let first = try reader.readUInt64()
            let last = try reader.readUInt64()
            guard first <= last else { throw BinaryReader.Malformed(offset: start, problem: "skipped numbers \(first) to \(last) are no range") }
            skipped.append(first...last)
        }
        var erasures: [UInt64: ErasedMemberships] = [:]
        let erasureCount = try reader.readUInt64()
        guard erasureCount <= UInt64(reader.remaining / 16) else {
            throw BinaryReader.Malformed(offset: reader.offset - 8, problem: "a count of \(erasureCount) erasures is more than the bytes left hold")
        }
        for _ in 0..<erasureCount {
            let erasure = try reader.readUInt64()
            var lists: [[UInt64]] = []
            for _ in 0..<2 {
                var ids: [UInt64] = []
                for _ in 0..<(try reader.readCount(minimumBytesEach: 8)) { ids.append(try reader.readUInt64()) }
                lists.append(ids)
            }
            erasures[erasure] = ErasedMemberships(erased: lists[0], detached: lists[1])
        }
        var chunks: [ChangeFeed.Chunk] = []
        let chunkCount = try reader.readUInt64()
        guard chunkCount <= UInt64(reader.remaining / 12) else {
            throw BinaryReader.Malformed(offset: reader.offset - 8, problem: "a count of \(chunkCount) feed chunks is more than the bytes left hold")
        }
        var previous: UInt64 = 0
        for _ in 0..<chunkCount {
            let newestTime = try reader.readInt64()
            var entries: [ChangeFeed.Entry] = []
            let countOffset = reader.offset
            let count = try reader.readCount(minimumBytesEach: 16)
            guard count <= ChangeFeed.chunkSize else {
                throw BinaryReader.Malformed(offset: countOffset, problem: "a feed chunk of \(count) entries, more than \(ChangeFeed.chunkSize)")
            }
            entries.reserveCapacity(ChangeFeed.chunkSize)
            for _ in 0..<count {
                let entryOffset = reader.offset
                let entry = ChangeFeed.Entry(sequence: try reader.readUInt64(), membership: try reader.readUInt64())
                guard entry.sequence >= previous, entry.sequence <= sequence else {
                    throw BinaryReader.Malformed(offset: entryOffset, problem: "feed entry of change \(entry.sequence) after change \(previous) or the snapshot's \(sequence)")
                }
                previous = entry.sequence
                entries.append(entry)
            }
            chunks.append(ChangeFeed.Chunk(entries: entries, newestTime: newestTime))
        }
        return ChangeFeed(horizon: horizon, chunks: chunks, erasures: erasures, skipped: skipped)
    }
}
