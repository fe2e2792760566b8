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
    static func upToDamage(path: String, file: String) throws(StorageError) -> LogSegmentScan {
        try LogSegmentScan(path: path, file: file, pastDamagedHeader: true)
    }

    private init(path: String, file: String, pastDamagedHeader: Bool) throws(StorageError) {
        guard let namedSequence = LogFormat.firstSequence(ofSegmentNamed: file) else {
            throw .corruptLog(file: file, offset: 0, problem: "not a log segment name")
        }
        self.file = file
        self.firstSequence = namedSequence
        let bytes = try FileSystem.readWholeFile(path)
        bytes.withUnsafeBytes { raw in scan(raw, pastDamagedHeader: pastDamagedHeader) }
    }

    private mutating func scan(_ bytes: UnsafeRawBufferPointer, pastDamagedHeader: Bool) {
        fileLength = bytes.count
        guard bytes.count >= LogFormat.segmentHeaderLength,
            !bytes[0..<LogFormat.segmentHeaderLength].allSatisfy({ $0 == 0 })
        else {
            // Created but its header never (fully) written: a crash during a log rotation.
            return markTorn(at: 0, total: bytes.count)
        }
        do throws(StorageError) {
            try checkHeader(bytes)
        } catch {
            damage = Damage(error: error, recordOffset: nil)
            guard pastDamagedHeader else { return }
            formatVersion = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            _ = readRecords(bytes)
            return
        }
        switch readRecords(bytes) {
        case .end:
            break
        case .unusedSpace(let offset):
            unusedTailOffset = offset
        case .tornTail(let offset):
            markTorn(at: offset, total: bytes.count)
        case .damage(let damage):
            self.damage = damage
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
    private mutating func readRecords(_ bytes: UnsafeRawBufferPointer) -> End {
        var frames = LogRecordFrames(bytes)
        var expected = firstSequence
        while let frame = frames.next() {
            let record: LogRecordFrames.Record
            switch frame {
            case .record(let intact):
                record = intact
            case .bad(let bad):
                if frames.isTornTail(bad) { return .tornTail(bad.start) }
                return damaged(at: bad.start, offset: bad.offset, problem: bad.problem)
            }
            var reader = BinaryReader(record.payload)
            let logged: LoggedChange
            do {
                logged = try reader.readLoggedChange(version: formatVersion, undatedTime: newestRecordedTime)
                newestRecordedTime = max(newestRecordedTime, logged.context.recordedAt)
            } catch {
                return damaged(at: record.start, offset: record.payloadStart + error.offset, problem: error.problem)
            }
            guard logged.sequence == expected else {
                return damaged(at: record.start, offset: record.payloadStart, problem: "record \(logged.sequence) where record \(expected) belongs")
            }
            records.append(logged)
            recordOffsets.append(record.start)
            expected += 1
        }
        return frames.unusedSpaceOffset.map { .unusedSpace($0) } ?? .end
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
