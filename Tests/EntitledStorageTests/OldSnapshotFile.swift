import Foundation

@testable import EntitledStorage

/// A snapshot file of an older format version, written by hand from its body's bytes: the header (magic,
/// version, flags, last change, body length, body checksum, header checksum) as STORAGE.md specifies it, so
/// that a test can prove a newer server still reads what an older one wrote.
enum OldSnapshotFile {
    static func write(version: UInt32, body: [UInt8], sequence: UInt64, into directory: String) throws {
        var header = BinaryWriter()
        header.bytes.append(contentsOf: SnapshotFormat.magic)
        header.write(version)
        header.write(UInt32(0))
        header.write(sequence)
        header.write(UInt64(body.count))
        header.write(CRC32C.checksum(body))
        header.write(CRC32C.checksum(header.bytes))
        try Data(header.bytes + body).write(to: URL(fileURLWithPath: directory + "/" + SnapshotFormat.fileName(sequence: sequence)))
    }
}
