import EntitledCore

/// The log's file format, version 7 (specified in Protocol/STORAGE.md); versions 1 to 6 are still read.
///
/// A log is a series of segment files `log-<first sequence, 20 digits>.wal`. Each starts with a 28-byte
/// header (magic `ENTLDLOG`, u32 version, u32 reserved zero, u64 first sequence, u32 CRC-32C of the 24
/// bytes before it) and holds records: a 12-byte record header (u32 payload length, u32 CRC-32C of the
/// payload, u32 CRC-32C of those 8 bytes) and the payload (`LoggedChange`).
enum LogFormat {
    static let magic: [UInt8] = Array("ENTLDLOG".utf8)
    /// The version this server writes.
    static let version: UInt32 = 7
    /// The versions this server reads. Version 1 records carry no audit context, idempotency key or
    /// lifecycle; version 2 has no undefine or erase records; version 3 no transfers; version 4 no
    /// extensions; version 5 no `refund_reversal` events; version 7 records are version 6's (the snapshot
    /// gained the change feed's section, and the two kinds of file share their version) (Protocol/STORAGE.md §10).
    static let readableVersions: ClosedRange<UInt32> = 1...7
    static let segmentHeaderLength = 28
    static let recordHeaderLength = 12
    /// The largest payload a record may have; a longer length field is corruption, not a torn write.
    static let maximumPayloadLength = 16 << 20

    static let segmentPrefix = "log-"
    static let segmentSuffix = ".wal"

    static func segmentName(firstSequence: UInt64) -> String {
        segmentPrefix + zeroPadded(firstSequence) + segmentSuffix
    }

    /// The first sequence a segment file name announces, or `nil` for any other name.
    static func firstSequence(ofSegmentNamed name: String) -> UInt64? {
        parseNumber(name, prefix: segmentPrefix, suffix: segmentSuffix)
    }

    static func segmentHeader(firstSequence: UInt64) -> [UInt8] {
        var writer = BinaryWriter(capacity: segmentHeaderLength)
        writer.bytes.append(contentsOf: magic)
        writer.write(version)
        writer.write(UInt32(0))
        writer.write(firstSequence)
        writer.write(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    /// Appends one framed record holding `logged` to `bytes`.
    static func appendRecord(_ logged: LoggedChange, to bytes: inout [UInt8]) {
        appendRecord(logged.change, sequence: logged.sequence, context: logged.context, to: &bytes)
    }

    /// Appends one framed record holding change `sequence` to `bytes`.
    static func appendRecord(_ change: StoreChange, sequence: UInt64, context: ChangeContext, to bytes: inout [UInt8]) {
        // Framed in a buffer on the stack, then appended with one copy; a record that does not fit (a
        // membership with a long history of transactions) is framed in the array itself.
        let fitted = withUnsafeTemporaryAllocation(byteCount: scratchRecordCapacity, alignment: 8) { scratch -> Bool in
            var writer = ScratchBinaryWriter(scratch)
            frame(change, sequence: sequence, context: context, with: &writer)
            guard !writer.overflowed else { return false }
            bytes.append(contentsOf: writer.written)
            return true
        }
        guard !fitted else { return }
        // Written in place, at the array's end: a writer of its own would cost an allocation and a copy.
        var writer = BinaryWriter(capacity: 0)
        swap(&writer.bytes, &bytes)
        defer { swap(&writer.bytes, &bytes) }
        frame(change, sequence: sequence, context: context, with: &writer)
    }

    /// The largest record framed on the stack: a grant's is about 100 bytes. At most 1 KiB, the most
    /// `withUnsafeTemporaryAllocation` is sure to take from the stack (beyond, it may allocate).
    static let scratchRecordCapacity = 1024

    /// Writes a record at the writer's end: a blank header, the payload, then the header filled in (the
    /// payload's length and checksum, and the checksum of those 8 bytes).
    private static func frame(_ change: StoreChange, sequence: UInt64, context: ChangeContext, with writer: inout some BinaryWriting) {
        let start = writer.writtenCount
        for _ in 0..<(recordHeaderLength / 4) { writer.write(UInt32(0)) }
        let payloadStart = writer.writtenCount
        writer.writeChange(change, sequence: sequence, context: context)
        let payloadEnd = writer.writtenCount
        writer.patch(UInt32(payloadEnd - payloadStart), at: start)
        writer.patch(writer.checksum(of: payloadStart..<payloadEnd), at: start + 4)
        writer.patch(writer.checksum(of: start..<(start + 8)), at: start + 8)
    }
}

/// Zero-padded to 20 digits, so that file names sort in sequence order.
func zeroPadded(_ number: UInt64) -> String {
    let digits = String(number)
    return String(repeating: "0", count: max(0, 20 - digits.count)) + digits
}

func parseNumber(_ name: String, prefix: String, suffix: String) -> UInt64? {
    guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count == prefix.count + 20 + suffix.count else {
        return nil
    }
    let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
    guard digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
    return UInt64(digits)
}
