import EntitledCore

/// What one log segment file holds, read and checked front to back.
struct LogSegmentScan {
    let file: String
    let firstSequence: UInt64
    var records: [LoggedChange] = []
    /// Where each record's payload starts in the file, for error messages about it.
    var payloadOffsets: [Int] = []
    /// Where a torn last record starts, when the file ends in the middle of one (or in zeros).
    var tornTailOffset: Int?
    /// Bytes after the last complete record.
    var tornBytes = 0

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
            guard remaining >= LogFormat.recordHeaderLength else {
                return markTorn(at: offset, total: bytes.count)
            }
            var header = BinaryReader(rest)
            let length = Int(try read { () throws(BinaryReader.Malformed) in try header.readUInt32() })
            let payloadChecksum = try read { () throws(BinaryReader.Malformed) in try header.readUInt32() }
            let headerChecksum = try read { () throws(BinaryReader.Malformed) in try header.readUInt32() }
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: rest[0..<8])) == headerChecksum else {
                if rest.allSatisfy({ $0 == 0 }) { return markTorn(at: offset, total: bytes.count) }
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
                // A last record whose header reached the disk but whose payload did not (zeros to the end).
                if payloadStart + length == bytes.count, payload.allSatisfy({ $0 == 0 }) {
                    return markTorn(at: offset, total: bytes.count)
                }
                throw .corruptLog(file: file, offset: payloadStart, problem: "a record fails its checksum")
            }
            var reader = BinaryReader(payload)
            let logged: LoggedChange
            do {
                logged = try reader.readLoggedChange()
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

    private func read<T>(_ body: () throws(BinaryReader.Malformed) -> T) throws(StorageError) -> T {
        do {
            return try body()
        } catch {
            throw .corruptLog(file: file, offset: error.offset, problem: error.problem)
        }
    }

    private func checkHeader(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
        var reader = BinaryReader(bytes)
        guard Array(bytes[0..<8]) == LogFormat.magic else {
            throw .corruptLog(file: file, offset: 0, problem: "not an entitled log file (bad magic)")
        }
        _ = try read { () throws(BinaryReader.Malformed) in try reader.readUInt64() }  // magic
        // The version before the checksum: another version may lay its header out differently.
        let version = try read { () throws(BinaryReader.Malformed) in try reader.readUInt32() }
        guard version == LogFormat.version else {
            throw .corruptLog(file: file, offset: 8, problem: "format version \(version); this server reads version \(LogFormat.version)")
        }
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
