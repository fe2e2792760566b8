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
///
/// The bytes are the whole file, or a window of it (`SegmentWindow`): file offsets `base ..< end`, where
/// the file may go on after `end` (`endsFile` false). Offsets are the file's. In a window, the frames also
/// end where one cannot be judged without more of the file (`incompleteOffset`): the reader moves its
/// window there and reads on.
struct LogRecordFrames {
    /// The file's bytes from `base` on: the whole file, or a window of it.
    let bytes: UnsafeRawBufferPointer
    /// The file offset of `bytes`' first byte.
    let base: Int
    /// Whether `bytes` reach the end of the file.
    let endsFile: Bool
    /// Where the next frame starts.
    private(set) var offset: Int
    /// Where unused space starts, once the frames reached it: every byte from there to the end of the file
    /// is zero, which ends the records without being one (Protocol/STORAGE.md §9, step 5).
    private(set) var unusedSpaceOffset: Int?
    /// Where the frames ended because the window ends before the frame there can be judged; `nil` at the
    /// end of the file, at unused space or after a bad frame.
    private(set) var incompleteOffset: Int?
    /// Whether every byte from `incompleteOffset` to the window's end is zero: unused space if the rest of
    /// the file is zero too, which only the reader can tell.
    private(set) var zerosReachWindowEnd = false
    /// A frame start known not to begin unused space (the reader found data after its zeros): judged as a
    /// frame.
    private let notUnusedSpace: Int?
    private var ended = false

    /// The frames of the segment file `bytes`, from `offset` on (by default, the first record's).
    init(_ bytes: UnsafeRawBufferPointer, from offset: Int = LogFormat.segmentHeaderLength) {
        self.init(bytes, base: 0, endsFile: true, from: offset)
    }

    /// The frames of a window of a segment file: `bytes` are the file's from offset `base` on, and reach
    /// its end when `endsFile`; from `offset` on. `notUnusedSpace`: a frame start whose zeros are known
    /// to stop before the end of the file.
    init(_ bytes: UnsafeRawBufferPointer, base: Int, endsFile: Bool, from offset: Int, notUnusedSpace: Int? = nil) {
        self.bytes = bytes
        self.base = base
        self.endsFile = endsFile
        self.offset = offset
        self.notUnusedSpace = notUnusedSpace
    }

    /// The file offset just past the bytes held.
    var end: Int { base + bytes.count }

    /// The bytes of file offsets `range`, which must be held.
    func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound - base)..<(range.upperBound - base)])
    }

    /// The next frame, or `nil` at the end of the file, at unused space, after a bad frame, or where the
    /// window ends before a frame can be judged (`incompleteOffset`).
    mutating func next() -> Frame? {
        guard !ended else { return nil }
        guard offset < end else {
            if !endsFile { incompleteOffset = offset }
            ended = true
            return nil
        }
        if offset != notUnusedSpace, isUnusedSpace(from: offset) {
            if endsFile {
                unusedSpaceOffset = offset
            } else {
                incompleteOffset = offset
                zerosReachWindowEnd = true
            }
            ended = true
            return nil
        }
        guard let frame = frame(at: offset) else {
            incompleteOffset = offset
            ended = true
            return nil
        }
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

    /// The frame starting at `start` (which must be inside the bytes held), checked; `nil` when the window
    /// ends before it can be judged: before its header, its payload, or the end of the last sector they
    /// reach (which the torn-tail test reads).
    func frame(at start: Int) -> Frame? {
        let remaining = end - start
        guard remaining >= LogFormat.recordHeaderLength else {
            return endsFile ? .bad(BadFrame(start: start, reason: .shortHeader)) : nil
        }
        let at = start - base
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        let payloadChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self))
        let headerChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))
        guard CRC32C.checksum(slice(start..<(start + 8))) == headerChecksum else {
            guard endsFile || end >= Self.sectorEnd(of: start + LogFormat.recordHeaderLength) else { return nil }
            return .bad(BadFrame(start: start, reason: .headerChecksumMismatch))
        }
        guard length <= LogFormat.maximumPayloadLength else { return .bad(BadFrame(start: start, reason: .badLength(length))) }
        guard remaining - LogFormat.recordHeaderLength >= length else {
            return endsFile ? .bad(BadFrame(start: start, reason: .truncatedPayload(length: length))) : nil
        }
        let payloadStart = start + LogFormat.recordHeaderLength
        let payload = slice(payloadStart..<(payloadStart + length))
        guard CRC32C.checksum(payload) == payloadChecksum else {
            guard endsFile || end >= Self.sectorEnd(of: payloadStart + length) else { return nil }
            return .bad(BadFrame(start: start, reason: .payloadChecksumMismatch(length: length)))
        }
        return .record(Record(start: start, payload: payload))
    }

    /// The end of the sector holding the byte before `offset`: how far a torn-tail test of bytes ending
    /// at `offset` reads.
    static func sectorEnd(of offset: Int) -> Int {
        (offset + sectorLength - 1) / sectorLength * sectorLength
    }

    /// Whether every byte from `offset` to the end of the bytes held is zero (to the end of the file, when
    /// they reach it).
    func isUnusedSpace(from offset: Int) -> Bool {
        SegmentWindow.firstNonZero(in: slice(offset..<end)) == nil
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
    func reachesNeverFilledSector(from start: Int, to recordEnd: Int) -> Bool {
        var chunkStart = start
        while chunkStart < min(recordEnd, end) {
            let sectorEnd = (chunkStart / Self.sectorLength + 1) * Self.sectorLength
            let chunkEnd = min(sectorEnd, end)
            if slice(chunkStart..<chunkEnd).allSatisfy({ $0 == 0 }) { return true }
            chunkStart = chunkEnd
        }
        return false
    }

    // MARK: Counting what a cut drops

    /// About how many records the bytes from `start` to the end of the file hold, where the frames went
    /// bad: a whole frame whose header passes its checks is skipped by its length; across damaged bytes
    /// (and a frame the file ends inside), the next such frame is searched byte by byte. A stretch of
    /// damaged bytes counts as one record, unless it is all zeros (space never written, not a record).
    /// Best effort: `CutReport.droppedRecords`. The bytes must reach the end of the file; a segment read
    /// in windows is counted by `SegmentWindow.estimatedRecordCount(from:)`.
    func estimatedRecordCount(from start: Int) -> Int {
        var tally = RecordTally()
        _ = count(from: start, into: &tally)
        return tally.finished
    }

    /// A count of records in progress (`estimatedRecordCount(from:)`), carried from window to window.
    struct RecordTally {
        var count = 0
        var inDamagedStretch = false
        var damagedStretchHasData = false
        /// Set when a count stopped because a damaged stretch's zeros reach the end of the window.
        var zerosReachWindowEnd = false

        /// The count once the end of the file is reached.
        var finished: Int { count + (inDamagedStretch && damagedStretchHasData ? 1 : 0) }
    }

    /// Counts the records from `start` on into `tally`, as far as the bytes held allow; returns where it
    /// stopped: the end of the bytes held, or a frame it cannot judge without more of the file. Zeros in a
    /// damaged stretch are skipped up to the last 11 before the next byte that is not zero: a frame's
    /// header checksum (its bytes 8 to 11) is never all zero, so no frame starts earlier among them.
    func count(from start: Int, into tally: inout RecordTally) -> Int {
        var offset = start
        while offset < end {
            let length: Int?
            guard let frame = frame(at: offset) else { return offset }
            switch frame {
            case .record(let record): length = record.payload.count
            case .bad(let bad):
                if case .payloadChecksumMismatch(let payloadLength) = bad.reason { length = payloadLength } else { length = nil }
            }
            if let length {
                if tally.inDamagedStretch, tally.damagedStretchHasData { tally.count += 1 }
                tally.inDamagedStretch = false
                tally.damagedStretchHasData = false
                tally.count += 1
                offset += LogFormat.recordHeaderLength + length
            } else {
                tally.inDamagedStretch = true
                if bytes[offset - base] != 0 {
                    tally.damagedStretchHasData = true
                    offset += 1
                } else if let nonZero = SegmentWindow.firstNonZero(in: slice(offset..<end)) {
                    offset = max(offset + 1, offset + nonZero - (LogFormat.recordHeaderLength - 1))
                } else if endsFile {
                    return end
                } else {
                    // Zeros to the end of the window: the reader looks for the next data itself (holes
                    // skipped), from where a frame could still start.
                    tally.zerosReachWindowEnd = true
                    return max(offset + 1, end - (LogFormat.recordHeaderLength - 1))
                }
            }
        }
        return offset
    }
}
