import EntitledCore

/// What one log segment file holds, read and checked front to back.
struct LogSegmentScan {
    let file: String
    let firstSequence: UInt64
    var records: [LoggedChange] = []
    /// Where each record's payload starts in the file, for error messages about it.
    var payloadOffsets: [Int] = []
    /// Where a torn last record starts: a crash cut it short (see `isTorn(at:through:in:)`).
    var tornTailOffset: Int?
    /// Bytes from the torn record to the end of the file.
    var tornBytes = 0
    /// Where zero-filled space after the last record starts, when the file has some: space the log writer
    /// prepared ahead of its records (`SegmentPreallocator`) and never used, or a file system's allocation
    /// that a crash left without its data. Not a record, and nothing to warn about.
    var unusedTailOffset: Int?
    /// Bytes of that zero-filled space.
    var unusedBytes: Int { unusedTailOffset.map { fileLength - $0 } ?? 0 }
    /// The file's length in bytes.
    private(set) var fileLength = 0
    /// The format version its header announces (`LogFormat.readableVersions`).
    private(set) var formatVersion = LogFormat.version
    /// The newest time a record stated so far: what a version 1 claim or define, which stated none, is
    /// dated with.
    private var newestRecordedTime = Timestamp(millisecondsSinceEpoch: 0)

    /// Reads and checks the segment at `path` (named `file`). A torn tail is reported, not thrown; every
    /// other problem throws `StorageError.corruptLog` naming the byte offset.
    init(path: String, file: String) throws(StorageError) {
        guard let namedSequence = LogFormat.firstSequence(ofSegmentNamed: file) else {
            throw .corruptLog(file: file, offset: 0, problem: "not a log segment name")
        }
        self.file = file
        self.firstSequence = namedSequence
        let bytes = try FileSystem.readWholeFile(path)
        try bytes.withBytes { (raw) throws(StorageError) in try scan(raw) }
    }

    private mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
        fileLength = bytes.count
        guard bytes.count >= LogFormat.segmentHeaderLength,
            !bytes[0..<LogFormat.segmentHeaderLength].allSatisfy({ $0 == 0 })
        else {
            // Created but its header never (fully) written: a crash during a log rotation.
            tornTailOffset = 0
            tornBytes = bytes.count
            return
        }
        try checkHeader(bytes)
        var offset = LogFormat.segmentHeaderLength
        var expected = firstSequence
        while offset < bytes.count {
            let remaining = bytes.count - offset
            let rest = UnsafeRawBufferPointer(rebasing: bytes[offset...])
            if rest.allSatisfy({ $0 == 0 }) {
                unusedTailOffset = offset
                return
            }
            guard remaining >= LogFormat.recordHeaderLength else {
                return markTorn(at: offset, total: bytes.count)
            }
            var header = BinaryReader(rest)
            let length = Int(try read { () throws(BinaryReader.Malformed) in try header.readUInt32() })
            let payloadChecksum = try read { () throws(BinaryReader.Malformed) in try header.readUInt32() }
            let headerChecksum = try read { () throws(BinaryReader.Malformed) in try header.readUInt32() }
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: rest[0..<8])) == headerChecksum else {
                if Self.isTorn(at: offset, through: offset + LogFormat.recordHeaderLength, in: bytes) {
                    return markTorn(at: offset, total: bytes.count)
                }
                throw .corruptLog(file: file, offset: offset, problem: "a record header fails its checksum")
            }
            guard length <= LogFormat.maximumPayloadLength else {
                throw .corruptLog(file: file, offset: offset, problem: "a record claims \(length) bytes, more than any record has")
            }
            guard remaining - LogFormat.recordHeaderLength >= length else {
                return markTorn(at: offset, total: bytes.count)
            }
            let payloadStart = offset + LogFormat.recordHeaderLength
            let payload = UnsafeRawBufferPointer(rebasing: bytes[payloadStart..<(payloadStart + length)])
            guard CRC32C.checksum(payload) == payloadChecksum else {
                if Self.isTorn(at: offset, through: payloadStart + length, in: bytes) {
                    return markTorn(at: offset, total: bytes.count)
                }
                throw .corruptLog(file: file, offset: payloadStart, problem: "a record fails its checksum")
            }
            var reader = BinaryReader(payload)
            let logged: LoggedChange
            do {
                logged = try reader.readLoggedChange(version: formatVersion, undatedTime: newestRecordedTime)
                newestRecordedTime = max(newestRecordedTime, logged.context.recordedAt)
            } catch {
                throw .corruptLog(file: file, offset: payloadStart + error.offset, problem: error.problem)
            }
            guard logged.sequence == expected else {
                throw .corruptLog(file: file, offset: payloadStart, problem: "record \(logged.sequence) where record \(expected) belongs")
            }
            records.append(logged)
            payloadOffsets.append(payloadStart)
            expected += 1
            offset = payloadStart + length
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
    static func isTorn(at start: Int, through end: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        var chunkStart = start
        while chunkStart < min(end, bytes.count) {
            let sectorEnd = (chunkStart / sectorLength + 1) * sectorLength
            let chunkEnd = min(sectorEnd, bytes.count)
            if UnsafeRawBufferPointer(rebasing: bytes[chunkStart..<chunkEnd]).allSatisfy({ $0 == 0 }) { return true }
            chunkStart = chunkEnd
        }
        return false
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
