import EntitledCore

/// Appends little-endian binary fields to a byte array: the encoding of log records and snapshots
/// (specified in Protocol/STORAGE.md).
struct BinaryWriter {
    var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: Int64) {
        write(UInt64(bitPattern: value))
    }

    /// A string: its UTF-8 length as u32, then the bytes.
    mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            write(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A membership id, as the string it is on the wire (copied from its text, never built as a String).
    mutating func write(_ id: MembershipID) {
        id.withUTF8 { utf8 in
            write(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// An optional string: a presence byte (0 or 1), then the string when present.
    mutating func write(_ value: String?) {
        if let value {
            write(UInt8(1))
            write(value)
        } else {
            write(UInt8(0))
        }
    }

    /// An optional time: a presence byte, then milliseconds since the epoch as i64.
    mutating func write(_ value: Timestamp?) {
        if let value {
            write(UInt8(1))
            write(value.millisecondsSinceEpoch)
        } else {
            write(UInt8(0))
        }
    }

    /// Overwrites a u32 written earlier at `offset`.
    mutating func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }
}

