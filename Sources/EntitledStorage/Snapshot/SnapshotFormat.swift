/// The snapshot file format, version 7 (specified in Protocol/STORAGE.md); versions 1 to 6 are still read.
///
/// `snapshot-<sequence, 20 digits>.snap`: a 40-byte header (magic `ENTLSNAP`, u32 version, u32 reserved
/// zero, u64 sequence of the last change included, u64 body length, u32 CRC-32C of the body, u32 CRC-32C
/// of the 36 header bytes before it), then the body: u32 entitlement count, each entitlement (name: string,
/// u32 product count, products: strings), u64 membership count, each membership in creation order; from
/// version 2 on, the history: idempotency keys, membership revisions and catalog revisions; from version 3
/// on, each catalog revision's action (define or undefine) and the erasures; from version 4 on, membership
/// revisions may be transfers; from version 5 on, extensions; from version 6 on, events may be
/// `refund_reversal`s; from version 7 on, the change feed's index follows the erasures.
enum SnapshotFormat {
    static let magic: [UInt8] = Array("ENTLSNAP".utf8)
    /// The version this server writes.
    static let version: UInt32 = 7
    /// The versions this server reads.
    static let readableVersions: ClosedRange<UInt32> = 1...7
    static let headerLength = 40

    static let prefix = "snapshot-"
    static let suffix = ".snap"
    /// A snapshot being written; left behind only by a crash, and removed at the next start.
    static let temporarySuffix = ".tmp"

    static func fileName(sequence: UInt64) -> String {
        prefix + zeroPadded(sequence) + suffix
    }

    static func sequence(ofFileNamed name: String) -> UInt64? {
        parseNumber(name, prefix: prefix, suffix: suffix)
    }

    static func header(sequence: UInt64, bodyLength: UInt64, bodyChecksum: UInt32) -> [UInt8] {
        var writer = BinaryWriter(capacity: headerLength)
        writer.bytes.append(contentsOf: magic)
        writer.write(version)
        writer.write(UInt32(0))
        writer.write(sequence)
        writer.write(bodyLength)
        writer.write(bodyChecksum)
        writer.write(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }
}
