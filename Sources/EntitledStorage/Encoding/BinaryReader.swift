import EntitledCore

/// Reads the fields `BinaryWriter` writes, refusing to read past the end.
struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    /// The reader ran out of bytes or met a value no writer produces.
    struct Malformed: Error {
        let offset: Int
        let problem: String
    }

    mutating func readUInt8() throws(Malformed) -> UInt8 {
        guard remaining >= 1 else { throw Malformed(offset: offset, problem: "ends in the middle of a field") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt32() throws(Malformed) -> UInt32 {
        guard remaining >= 4 else { throw Malformed(offset: offset, problem: "ends in the middle of a field") }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func readUInt64() throws(Malformed) -> UInt64 {
        guard remaining >= 8 else { throw Malformed(offset: offset, problem: "ends in the middle of a field") }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func readInt64() throws(Malformed) -> Int64 {
        Int64(bitPattern: try readUInt64())
    }

    mutating func readString() throws(Malformed) -> String {
        let length = Int(try readUInt32())
        guard remaining >= length else { throw Malformed(offset: offset, problem: "a string runs past the end") }
        let raw = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)])
        // `String(decoding:as:)` with a check that nothing was repaired, rather than the generic
        // `String(validating:as:)`: at a restart of a million memberships that one spent 12% of the time
        // looking up its generic metadata (perf). Nearly every id is ASCII, which needs no comparison.
        let string = String(decoding: raw, as: UTF8.self)
        guard Self.isASCII(raw) || string.utf8.elementsEqual(raw) else {
            throw Malformed(offset: offset, problem: "a string is not valid UTF-8")
        }
        offset += length
        return string
    }

    @inline(__always)
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// Moves past a string without reading it.
    mutating func skipString() throws(Malformed) {
        let length = Int(try readUInt32())
        try skip(length)
    }

    /// Moves past `count` bytes.
    mutating func skip(_ count: Int) throws(Malformed) {
        guard remaining >= count else { throw Malformed(offset: offset, problem: "ends in the middle of a field") }
        offset += count
    }

    mutating func readOptionalString() throws(Malformed) -> String? {
        try readPresence() ? try readString() : nil
    }

    mutating func readOptionalTimestamp() throws(Malformed) -> Timestamp? {
        try readPresence() ? Timestamp(millisecondsSinceEpoch: try readInt64()) : nil
    }

    private mutating func readPresence() throws(Malformed) -> Bool {
        let flag = try readUInt8()
        guard flag <= 1 else { throw Malformed(offset: offset - 1, problem: "a presence byte is \(flag), not 0 or 1") }
        return flag == 1
    }
}
