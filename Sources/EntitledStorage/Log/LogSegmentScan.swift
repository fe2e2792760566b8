import EntitledCore

/// What one log segment file holds, read and checked front to back: its file header here, each record's
/// frame by `LogRecordFrames`, then the record's contents and sequence.
struct LogSegmentScan {
    let file: String
    let firstSequence: UInt64
    var records: [LoggedChange] = []
    /// Where each record starts in the file (its record header).
    var recordOffsets: [Int] = []
    /// Where each record's payload starts in the file, for error messages about it.
    var payloadOffsets: [Int] { recordOffsets.map { $0 + LogFormat.recordHeaderLength } }
    /// Where a torn last record starts: a crash cut it short (`LogRecordFrames.isTornTail`).
    var tornTailOffset: Int?
    /// Bytes from the torn record to the end of the file.
    var tornBytes = 0
    /// Where zero-filled space after the last record starts, when the file has some: space the log writer
    /// prepared ahead of its records (`SegmentPreallocator`) and never used, or a file system's allocation
    /// that a crash left without its data. Not a record, and nothing to warn about.
    var unusedTailOffset: Int?
    /// Bytes of that zero-filled space.
    var unusedBytes: Int { unusedTailOffset.map { fileLength - $0 } ?? 0 }
    /// Where reading stopped at damage (anything but a torn tail), when it did: only a scan made by
    /// `upToDamage(path:file:)` keeps it; `init(path:file:)` throws it.
    private(set) var damage: Damage?
    /// The file's length in bytes.
    private(set) var fileLength = 0
    /// The format version its header announces (`LogFormat.readableVersions`).
    private(set) var formatVersion = LogFormat.version
    /// The newest time a record stated so far: what a version 1 claim or define, which stated none, is
    /// dated with.
    private var newestRecordedTime = Timestamp(millisecondsSinceEpoch: 0)

    /// The first problem found in a segment, other than a torn tail.
    struct Damage {
        /// What `init(path:file:)` throws: `StorageError.corruptLog`, naming the first byte found wrong.
        let error: StorageError
        /// Where the record found wrong starts, right after the last good one: where a cut keeps every
        /// record before the damage. `nil` when the damage is in the file header.
        let recordOffset: Int?
    }

    /// Reads and checks the segment at `path` (named `file`). A torn tail is reported, not thrown; every
    /// other problem throws `StorageError.corruptLog` naming the byte offset.
    init(path: String, file: String) throws(StorageError) {
        try self.init(path: path, file: file, pastDamagedHeader: false)
        if let damage { throw damage.error }
    }

    /// Reads and checks the segment at `path` (named `file`) as far as its records pass every check, and
    /// says where and why it stopped (`damage`) instead of throwing: `records` are the good ones before
    /// the damage. Where the file header is damaged, the records are still read (with the version it
    /// states, from the sequence the name states), so that an operator learns how many look intact.
    /// Throws only when the file cannot be read, or `file` is not a segment's name.
    static func upToDamage(path: String, file: String, windowCapacity: Int = SegmentWindow.standardCapacity) throws(StorageError) -> LogSegmentScan {
        try LogSegmentScan(path: path, file: file, pastDamagedHeader: true, windowCapacity: windowCapacity)
    }

    /// Records handed to a replay together: their changes, and where each record starts in the file.
    typealias Batch = (changes: [LoggedChange], recordStarts: [Int])

    /// How many records a replay is handed at a time: a segment of millions of grants is never held
    /// decoded all at once (a few hundred bytes each), and the memory of one batch is reused by the next.
    static let replayBatchSize = 65_536

    /// Reads and checks the segment at `path` (named `file`) as `init(path:file:)` does, but hands its
    /// records to `replay` in batches, in order, as they are decoded, instead of keeping them (`records`
    /// stays empty). `reserve` is told first how many of the records create a membership. A batch is
    /// handed over only once every record in it passed its checks; damage found later in the file throws
    /// after the batches before it were replayed. An error `replay` throws ends the scan and is thrown.
    static func replaying(
        path: String, file: String, batchSize: Int = replayBatchSize, windowCapacity: Int = SegmentWindow.standardCapacity,
        reserve: (_ creations: Int) -> Void, replay: (Batch) throws(StorageError) -> Void
    ) throws(StorageError) -> LogSegmentScan {
        let scan = try LogSegmentScan(
            path: path, file: file, pastDamagedHeader: false, windowCapacity: windowCapacity, keep: .handedOver(batchSize: batchSize),
            reserve: reserve, replay: replay
        )
        if let damage = scan.damage { throw damage.error }
        return scan
    }

    private init(
        path: String, file: String, pastDamagedHeader: Bool, windowCapacity: Int = SegmentWindow.standardCapacity, keep: Keeping = .kept,
        reserve: (Int) -> Void = { _ in }, replay: (Batch) throws(StorageError) -> Void = { _ in }
    ) throws(StorageError) {
        guard let namedSequence = LogFormat.firstSequence(ofSegmentNamed: file) else {
            throw .corruptLog(file: file, offset: 0, problem: "not a log segment name")
        }
        self.file = file
        self.firstSequence = namedSequence
        // Read a window at a time: the memory a segment takes does not grow with its size.
        var window = try SegmentWindow(path: path, capacity: windowCapacity)
        var handing = Handing(keep: keep)
        try scan(&window, pastDamagedHeader: pastDamagedHeader, handing: &handing, reserve: reserve, replay: replay)
        fileLength = try window.length()
        if let failure = handing.failure { throw failure }
    }

    /// Where the records read go: kept in `records`, or handed to a replay in batches of `batchSize`.
    private enum Keeping {
        case kept
        case handedOver(batchSize: Int)
    }

    /// Where the records read go, and what the replay they were handed to threw.
    private struct Handing {
        let keep: Keeping
        var failure: StorageError?
    }

    private mutating func scan(
        _ window: inout SegmentWindow, pastDamagedHeader: Bool, handing: inout Handing,
        reserve: (Int) -> Void, replay: (Batch) throws(StorageError) -> Void
    ) throws(StorageError) {
        try window.load(from: 0)
        guard window.count >= LogFormat.segmentHeaderLength,
            SegmentWindow.firstNonZero(in: UnsafeRawBufferPointer(rebasing: window.bytes[0..<LogFormat.segmentHeaderLength])) != nil
        else {
            // Created but its header never (fully) written: a crash during a log rotation.
            let length = try window.length()
            return markTorn(at: 0, total: length)
        }
        do throws(StorageError) {
            try checkHeader(window.bytes)
        } catch {
            damage = Damage(error: error, recordOffset: nil)
            guard pastDamagedHeader else { return }
            formatVersion = UInt32(littleEndian: window.bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            _ = try readRecords(&window, handing: &handing, replay: replay)
            return
        }
        if case .handedOver = handing.keep {
            let creations = try Self.countCreations(&window)
            reserve(creations)
        }
        switch try readRecords(&window, handing: &handing, replay: replay) {
        case .end:
            break
        case .unusedSpace(let offset):
            unusedTailOffset = offset
        case .tornTail(let offset):
            let length = try window.length()
            markTorn(at: offset, total: length)
        case .damage(let damage):
            self.damage = damage
        }
    }

    /// How many records of the segment create a membership, counted by hopping from frame header to frame
    /// header (each header checked, no payload read beyond its kind byte) up to the first bad one: what a
    /// replay reserves room for before it decodes anything. A pass of its own, since the segment is read a
    /// window at a time; it costs a read of the file from the page cache and a checksum of 8 bytes a
    /// record, which the restart benchmark does not tell from its noise (Protocol/STORAGE.md §9).
    private static func countCreations(_ window: inout SegmentWindow) throws(StorageError) -> Int {
        // A creation's kind byte follows its 8-byte sequence (STORAGE.md).
        let head = LogFormat.recordHeaderLength + 9
        var creations = 0
        var offset = LogFormat.segmentHeaderLength
        while true {
            try window.load(from: offset)
            let bytes = window.bytes
            var at = offset - window.base
            while at + LogFormat.recordHeaderLength <= bytes.count {
                let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
                let headerChecksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self))
                guard length <= LogFormat.maximumPayloadLength,
                    CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[at..<(at + 8)])) == headerChecksum
                else { return creations }
                if length > 8 {
                    guard at + head <= bytes.count else { break }
                    if bytes[at + LogFormat.recordHeaderLength + 8] == 1 { creations += 1 }
                }
                at += LogFormat.recordHeaderLength + length
            }
            let next = window.base + at
            if window.endsFile, next + LogFormat.recordHeaderLength > window.base + window.count { return creations }
            if next == offset {
                // Not even one header fits: only when a window of a few bytes (a file that grew since it
                // was opened) ends in the middle of one.
                try window.load(from: offset, atLeast: head)
                guard window.count >= head else { return creations }
                continue
            }
            offset = next
        }
    }

    /// How the records of a segment end.
    private enum End {
        /// At the end of the file.
        case end
        /// At zero-filled space starting at this offset.
        case unusedSpace(Int)
        /// At a torn last record starting at this offset.
        case tornTail(Int)
        case damage(Damage)
    }

    /// Reads the records after the file header, each checked: its frame, its contents, its sequence.
    /// The file is read a window at a time; in each window the frames are found first, front to back, and
    /// their contents then decoded in batches, on every core for a large one (`LoggedChanges.decode`),
    /// checked in order, and kept or handed over, before the window moves on. The first problem in file
    /// order ends the records, as if they had been read one by one.
    private mutating func readRecords(
        _ window: inout SegmentWindow, handing: inout Handing, replay: (Batch) throws(StorageError) -> Void
    ) throws(StorageError) -> End {
        var expected = firstSequence
        var offset = LogFormat.segmentHeaderLength
        // A frame start whose zeros were found to stop before the end of the file: not unused space.
        var notUnusedSpace: Int?
        var needsLargestFrame = false
        while true {
            try window.load(from: offset, atLeast: needsLargestFrame ? SegmentWindow.largestFrameSpan : 0)
            var frames = LogRecordFrames(window.bytes, base: window.base, endsFile: window.endsFile, from: offset, notUnusedSpace: notUnusedSpace)
            var intact: [LogRecordFrames.Record] = []
            var ending: End?
            framing: while let frame = frames.next() {
                switch frame {
                case .record(let record):
                    intact.append(record)
                case .bad(let bad):
                    ending = frames.isTornTail(bad) ? .tornTail(bad.start) : damaged(at: bad.start, offset: bad.offset, problem: bad.problem)
                    break framing
                }
            }
            // The records' payloads are in the window: decoded before it moves.
            if let stop = handOver(intact, expected: &expected, handing: &handing, replay: replay) { return stop }
            if let ending { return ending }
            if let unused = frames.unusedSpaceOffset { return .unusedSpace(unused) }
            guard let incomplete = frames.incompleteOffset else { return .end }
            if frames.zerosReachWindowEnd {
                // Zeros to the end of the window: unused space when they go on to the end of the file.
                guard try window.firstNonZeroByte(from: window.base + window.count) != nil else { return .unusedSpace(incomplete) }
                notUnusedSpace = incomplete
            }
            // A frame larger than the window (a record of up to 16 MiB) gets a window it fits in.
            needsLargestFrame = incomplete == offset && !frames.zerosReachWindowEnd
            offset = incomplete
        }
    }

    /// Decodes `intact` (frames that passed their checks, in file order) in batches, checks that each
    /// holds change `expected` (which moves on), and keeps them or hands them to `replay`; how the records
    /// end when one is out of order or does not decode, or `replay` threw (`handing.failure`).
    private mutating func handOver(
        _ intact: [LogRecordFrames.Record], expected: inout UInt64, handing: inout Handing, replay: (Batch) throws(StorageError) -> Void
    ) -> End? {
        var batchStart = 0
        let largestBatch: Int
        switch handing.keep {
        case .kept: largestBatch = Self.replayBatchSize
        case .handedOver(let size): largestBatch = max(1, size)
        }
        // A window's records in batches of equal size: a small remainder of a window would be decoded on
        // one core (`LoggedChanges.smallestParallelDecoding`).
        let batchCount = (intact.count + largestBatch - 1) / largestBatch
        let batchSize = batchCount > 0 ? (intact.count + batchCount - 1) / batchCount : largestBatch
        while batchStart < intact.count {
            let batch = intact[batchStart..<min(batchStart + batchSize, intact.count)]
            // Version 1 records are dated by the ones before them: those are decoded in order.
            let decoded =
                formatVersion >= 2
                ? LoggedChanges.decode(batch, version: formatVersion)
                : LoggedChanges.decodeInOrder(batch, version: formatVersion, undatedTime: &newestRecordedTime)
            var good = decoded.changes.count
            var outOfOrder: End?
            for index in decoded.changes.indices {
                let sequence = decoded.changes[index].sequence
                guard sequence == expected else {
                    let record = batch[batch.startIndex + index]
                    outOfOrder = damaged(at: record.start, offset: record.payloadStart, problem: "record \(sequence) where record \(expected) belongs")
                    good = index
                    break
                }
                newestRecordedTime = max(newestRecordedTime, decoded.changes[index].context.recordedAt)
                expected += 1
            }
            // Taken whole where it can be: copying a million changes (a retain of every string) cost more
            // than decoding them on a second core saved.
            let changes = good == decoded.changes.count ? decoded.changes : Array(decoded.changes[..<good])
            let starts = batch.prefix(good).map(\.start)
            if case .kept = handing.keep {
                if records.isEmpty { records = changes } else { records += changes }
                recordOffsets += starts
            } else if !changes.isEmpty {
                do throws(StorageError) {
                    try replay((changes, starts))
                } catch {
                    handing.failure = error
                    return .end
                }
            }
            if let outOfOrder { return outOfOrder }
            if let failure = decoded.failure {
                let record = batch[batch.startIndex + good]
                return damaged(at: record.start, offset: record.payloadStart + failure.offset, problem: failure.problem)
            }
            batchStart += batch.count
        }
        return nil
    }

    private func damaged(at recordOffset: Int, offset: Int, problem: String) -> End {
        .damage(Damage(error: .corruptLog(file: file, offset: offset, problem: problem), recordOffset: recordOffset))
    }

    private func read<T>(_ body: () throws(BinaryReader.Malformed) -> T) throws(StorageError) -> T {
        do {
            return try body()
        } catch {
            throw .corruptLog(file: file, offset: error.offset, problem: error.problem)
        }
    }

    private mutating func checkHeader(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
        var reader = BinaryReader(bytes)
        guard Array(bytes[0..<8]) == LogFormat.magic else {
            throw .corruptLog(file: file, offset: 0, problem: "not an entitled log file (bad magic)")
        }
        _ = try read { () throws(BinaryReader.Malformed) in try reader.readUInt64() }  // magic
        // The version before the checksum: another version may lay its header out differently.
        let version = try read { () throws(BinaryReader.Malformed) in try reader.readUInt32() }
        guard LogFormat.readableVersions.contains(version) else {
            throw .corruptLog(file: file, offset: 8, problem: "format version \(version); this server reads versions \(LogFormat.readableVersions.lowerBound) to \(LogFormat.readableVersions.upperBound)")
        }
        formatVersion = version
        let checksum = bytes.loadUnaligned(fromByteOffset: 24, as: UInt32.self).littleEndian
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<24])) == checksum else {
            throw .corruptLog(file: file, offset: 0, problem: "the file header fails its checksum")
        }
        _ = try read { () throws(BinaryReader.Malformed) in try reader.readUInt32() }
        let first = try read { () throws(BinaryReader.Malformed) in try reader.readUInt64() }
        guard first == firstSequence else {
            throw .corruptLog(file: file, offset: 16, problem: "the header says the first record is \(first), the name says \(firstSequence)")
        }
    }

    private mutating func markTorn(at offset: Int, total: Int) {
        tornTailOffset = offset
        tornBytes = total - offset
    }
}
