/// The record frames of a log segment (Protocol/STORAGE.md §3, "Record framing") and their checks: a
/// 12-byte record header (u32 payload length, u32 CRC-32C of the payload, u32 CRC-32C of those 8 bytes),
/// then the payload. Every reader of a segment's records goes through here, so that the frame and its
/// checks live in one place: `LogSegmentScan` (recovery, and `entitled-datadir verify` and `cut-log`).
///
/// It knows frames only. What a payload says (`LoggedChange`) and whether it comes in sequence is the
/// scan's business; the writer's side of the frame is `LogFormat.appendRecord`.
///
/// Read front to back with `next()`: each record, until the end of the file, unused space, or a bad frame
/// (after a bad frame, where the next one would start is unknown, so the frames end there).
struct LogRecordFrames {
    /// The whole segment file.
    let bytes: UnsafeRawBufferPointer
    /// Where the next frame starts.
    private(set) var offset: Int
    /// Where unused space starts, once the frames reached it: every byte from there to the end of the file
    /// is zero, which ends the records without being one (Protocol/STORAGE.md §9, step 5).
    private(set) var unusedSpaceOffset: Int?
    private var ended = false

    /// The frames of the segment file `bytes`, from `offset` on (by default, the first record's).
    init(_ bytes: UnsafeRawBufferPointer, from offset: Int = LogFormat.segmentHeaderLength) {
        self.bytes = bytes
        self.offset = offset
    }

    /// The next frame, or `nil` at the end of the file, at unused space, or after a bad frame.
    mutating func next() -> Frame? {
        guard !ended, offset < bytes.count else { return nil }
        if isUnusedSpace(from: offset) {
            unusedSpaceOffset = offset
            ended = true
            return nil
        }
        let frame = frame(at: offset)
        switch frame {
        case .record(let record): offset = record.end
        case .bad: ended = true
        }
        return frame
    }

    /// One frame, checked: the header's checksum, then its length, then the payload's checksum.
    enum Frame {
        /// Header and payload pass their checks.
        case record(Record)
        /// The frame fails a check, or the file ends inside it.
        case bad(BadFrame)
    }

    /// A record whose frame passes its checks.
    struct Record {
        /// Where its record header starts in the file.
        let start: Int
        /// Its payload bytes (a `LoggedChange`).
        let payload: UnsafeRawBufferPointer

        var payloadStart: Int { start + LogFormat.recordHeaderLength }
        /// Where the next frame starts.
        var end: Int { payloadStart + payload.count }
    }

    /// A frame that is not a record, and why.
    struct BadFrame: Hashable {
        enum Reason: Hashable {
            /// Fewer than the record header's 12 bytes remain.
            case shortHeader
            /// The record header fails its checksum, so its length cannot be trusted.
            case headerChecksumMismatch
            /// The header passes its checksum but claims more than the largest payload a record may have.
            case badLength(Int)
            /// The header passes, but the file ends before the `length` bytes of its payload do.
            case truncatedPayload(length: Int)
            /// The header passes; the `length` bytes of the payload fail their checksum.
            case payloadChecksumMismatch(length: Int)
        }

        /// Where the frame's record header starts: right after the last good record.
        let start: Int
        let reason: Reason

        /// The first byte found wrong, as recovery names it: the record's start for its header, the
        /// payload's start for its payload.
        var offset: Int {
            if case .payloadChecksumMismatch = reason { return start + LogFormat.recordHeaderLength }
            return start
        }

        /// What is wrong, for example `a record fails its checksum`.
        var problem: String {
            switch reason {
            case .shortHeader: return "the file ends inside a record header"
            case .headerChecksumMismatch: return "a record header fails its checksum"
            case .badLength(let length): return "a record claims \(length) bytes, more than any record has"
            case .truncatedPayload: return "the file ends in the middle of a record"
            case .payloadChecksumMismatch: return "a record fails its checksum"
            }
        }
    }

    /// The frame starting at `start` (which must be inside the file), checked.
    func frame(at start: Int) -> Frame {
        let remaining = bytes.count - start
        guard remaining >= LogFormat.recordHeaderLength else { return .bad(BadFrame(start: start, reason: .shortHeader)) }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
        let payloadChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 4, as: UInt32.self))
        let headerChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: start + 8, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[start..<(start + 8)])) == headerChecksum else {
            return .bad(BadFrame(start: start, reason: .headerChecksumMismatch))
        }
        guard length <= LogFormat.maximumPayloadLength else { return .bad(BadFrame(start: start, reason: .badLength(length))) }
        guard remaining - LogFormat.recordHeaderLength >= length else {
            return .bad(BadFrame(start: start, reason: .truncatedPayload(length: length)))
        }
        let payloadStart = start + LogFormat.recordHeaderLength
        let payload = UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<(payloadStart + length)])
        guard CRC32C.checksum(payload) == payloadChecksum else {
            return .bad(BadFrame(start: start, reason: .payloadChecksumMismatch(length: length)))
        }
        return .record(Record(start: start, payload: payload))
    }

    /// Whether every byte from `offset` to the end of the file is zero.
    func isUnusedSpace(from offset: Int) -> Bool {
        UnsafeRawBufferPointer(rebasing: bytes[offset...]).allSatisfy { $0 == 0 }
    }

    // MARK: Torn tails

    /// Whether `frame`, met where the records still had bytes that are not all zero, is a torn tail: a
    /// last record a crash cut short, never acknowledged, rather than damage (Protocol/STORAGE.md §9,
    /// step 5). A frame the file ends inside is torn; one that fails a checksum is torn when it reaches a
    /// sector it never filled; a length over the limit is never torn.
    func isTornTail(_ frame: BadFrame) -> Bool {
        switch frame.reason {
        case .shortHeader, .truncatedPayload:
            return true
        case .headerChecksumMismatch:
            return reachesNeverFilledSector(from: frame.start, to: frame.start + LogFormat.recordHeaderLength)
        case .payloadChecksumMismatch(let length):
            return reachesNeverFilledSector(from: frame.start, to: frame.start + LogFormat.recordHeaderLength + length)
        case .badLength:
            return false
        }
    }

    /// The size of the unit a disk writes whole or not at all. Real devices write 512 or 4096 bytes
    /// atomically; the smaller one is assumed, which is right for both.
    static let sectorLength = 512

    /// Whether the record spanning bytes `start..<end` (which fails its checksums) was cut short by a
    /// crash, rather than damaged after it was written.
    ///
    /// A write that never reached the disk leaves the sectors it should have filled as they were, and the
    /// space after the last record is zeros (the log writer fills it ahead, or the file system allocated it
    /// as zeros). So the record is torn when, in some sector it reaches, every byte from the record's start
    /// (or the sector's start) to the sector's end (or the end of the file) is zero. A record damaged on
    /// disk after it was written has no such sector: within a sector, its bytes are followed by those of the
    /// next record, and a torn write can only be the newest records. (etcd's write-ahead log uses the same
    /// test.)
    func reachesNeverFilledSector(from start: Int, to end: Int) -> Bool {
        var chunkStart = start
        while chunkStart < min(end, bytes.count) {
            let sectorEnd = (chunkStart / Self.sectorLength + 1) * Self.sectorLength
            let chunkEnd = min(sectorEnd, bytes.count)
            if UnsafeRawBufferPointer(rebasing: bytes[chunkStart..<chunkEnd]).allSatisfy({ $0 == 0 }) { return true }
            chunkStart = chunkEnd
        }
        return false
    }

    // MARK: Counting what a cut drops

    /// About how many records the bytes from `start` to the end of the file hold, where the frames went
    /// bad: a whole frame whose header passes its checks is skipped by its length; across damaged bytes
    /// (and a frame the file ends inside), the next such frame is searched byte by byte. A stretch of
    /// damaged bytes counts as one record, unless it is all zeros (space never written, not a record).
    /// Best effort: `CutReport.droppedRecords`.
    func estimatedRecordCount(from start: Int) -> Int {
        var count = 0
        var offset = start
        var damagedStretchHasData = false
        var inDamagedStretch = false
        while offset < bytes.count {
            let length: Int?
            switch frame(at: offset) {
            case .record(let record): length = record.payload.count
            case .bad(let bad):
                if case .payloadChecksumMismatch(let payloadLength) = bad.reason { length = payloadLength } else { length = nil }
            }
            if let length {
                if inDamagedStretch, damagedStretchHasData { count += 1 }
                inDamagedStretch = false
                damagedStretchHasData = false
                count += 1
                offset += LogFormat.recordHeaderLength + length
            } else {
                inDamagedStretch = true
                if bytes[offset] != 0 { damagedStretchHasData = true }
                offset += 1
            }
        }
        if inDamagedStretch, damagedStretchHasData { count += 1 }
        return count
    }
}
