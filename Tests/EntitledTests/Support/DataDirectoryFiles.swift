import Foundation

/// Reading and damaging the files of a data directory, for durability tests.
enum DataDirectoryFiles {
    static func names(in directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    static func segments(in directory: String) throws -> [String] {
        try names(in: directory).filter { $0.hasPrefix("log-") && $0.hasSuffix(".wal") }
    }

    static func snapshots(in directory: String) throws -> [String] {
        try names(in: directory).filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".snap") }
    }

    /// The byte offsets at which the records of a log segment start (after its 28-byte header), read from
    /// each record's length field, and where the last one ends (before any zeros the log prepared).
    static func records(of path: String) throws -> (offsets: [Int], end: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offsets: [Int] = []
        var offset = 28
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            // A zero length is no record (a payload holds at least its sequence): zeros prepared ahead.
            guard length > 0, offset + 12 + length <= bytes.count else { break }
            offsets.append(offset)
            offset += 12 + length
        }
        return (offsets, offset)
    }

    static func recordOffsets(of path: String) throws -> [Int] {
        try records(of: path).offsets
    }

    static func truncate(_ path: String, to length: Int) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(length))
        try handle.close()
    }

    static func flipByte(in path: String, at offset: Int) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[offset] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func copyDirectory(_ source: String, to destination: String) throws {
        try? FileManager.default.removeItem(atPath: destination)
        try FileManager.default.copyItem(atPath: source, toPath: destination)
    }
}
