import EntitledCore

/// What the binary encodings of log records and snapshots (Protocol/STORAGE.md) are written with: four
/// primitives, and everything else (`Membership+Binary.swift`, `Lifecycle+Binary.swift`, ...) written once
/// on top of them for both writers, `BinaryWriter` (a growing array) and `ScratchBinaryWriter` (a fixed
/// buffer, for a log record on the write path).
protocol BinaryWriting {
    mutating func write(_ value: UInt8)
    mutating func write(_ value: UInt32)
    mutating func write(_ value: UInt64)
    /// Appends `bytes` as they are.
    mutating func writeBytes(_ bytes: UnsafeRawBufferPointer)
    /// How many bytes were written: where the next field goes.
    var writtenCount: Int { get }
    /// Overwrites a u32 written earlier at `offset`.
    mutating func patch(_ value: UInt32, at offset: Int)
    /// The CRC-32C of the bytes written in `range`.
    func checksum(of range: Range<Int>) -> UInt32
}

/// Appends little-endian binary fields to a byte array: the encoding of snapshots and segment headers,
/// and of the rare log record too long for a `ScratchBinaryWriter`.
struct BinaryWriter: BinaryWriting {
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

    mutating func writeBytes(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    var writtenCount: Int { bytes.count }

    func checksum(of range: Range<Int>) -> UInt32 {
        bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Overwrites a u32 written earlier at `offset`.
    mutating func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (index, byte) in raw.enumerated() { bytes[offset + index] = byte }
        }
    }
}

/// Writes into a fixed buffer the caller owns (a log record's, on the stack), with a bounds check per
/// field and no allocation: appending each field to an array cost a uniqueness check, a capacity check
/// and a `memmove` call, about 6% of a grant's CPU in `perf` (bulk load of 1M grants). A field that does
/// not fit is dropped and `overflowed` set: the caller then writes the whole thing with a `BinaryWriter`.
struct ScratchBinaryWriter: BinaryWriting {
    private let buffer: UnsafeMutableRawBufferPointer
    /// The bytes written so far.
    private(set) var count = 0
    /// Set once a field did not fit: what was written is incomplete.
    private(set) var overflowed = false

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// The bytes written so far.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[..<count]) }

    var writtenCount: Int { count }

    func checksum(of range: Range<Int>) -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[range]))
    }

    @inline(__always)
    private mutating func store<Value: FixedWidthInteger>(_ value: Value) {
        let size = MemoryLayout<Value>.size
        guard buffer.count - count >= size else {
            overflowed = true
            return
        }
        buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: Value.self)
        count += size
    }

    mutating func write(_ value: UInt8) { store(value) }
    mutating func write(_ value: UInt32) { store(value) }
    mutating func write(_ value: UInt64) { store(value) }

    mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard buffer.count - count >= bytes.count else {
            overflowed = true
            return
        }
        if let source = bytes.baseAddress { (buffer.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count) }
        count += bytes.count
    }

    /// Overwrites a u32 written earlier at `offset`.
    mutating func patch(_ value: UInt32, at offset: Int) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
}

extension BinaryWriting {
    mutating func write(_ value: Int64) {
        write(UInt64(bitPattern: value))
    }

    /// A string: its UTF-8 length as u32, then the bytes.
    mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            write(UInt32(utf8.count))
            writeBytes(UnsafeRawBufferPointer(utf8))
        }
    }

    /// A membership id, as the string it is on the wire (copied from its text, never built as a String).
    mutating func write(_ id: MembershipID) {
        id.withUTF8 { utf8 in
            write(UInt32(utf8.count))
            writeBytes(utf8)
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
}
