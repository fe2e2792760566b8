#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A log segment read in bounded pieces: the window holds a stretch of the file, from `base` on, in a
/// buffer of a fixed size, so that reading a segment takes the same memory whatever its size. A sparse
/// segment of gigabytes used to be read whole, which made the server and `entitled-datadir` end with an
/// allocation failure under an address-space limit.
///
/// The buffer holds `standardCapacity` bytes (less for a smaller file); it grows once, to
/// `largestFrameSpan`, only when one record's frame needs more: a record is at most 16 MiB
/// (`LogFormat.maximumPayloadLength`), and it must be whole in memory to be checked.
struct SegmentWindow: ~Copyable {
    let path: String
    private let descriptor: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    /// The file offset of the window's first byte.
    private(set) var base = 0
    /// How many bytes of the file the window holds, from `base`.
    private(set) var count = 0
    /// The file's length, once a read met its end.
    private(set) var endOfFile: Int?

    /// The buffer of a window: large enough that a window holds tens of thousands of records, so a
    /// replay decodes them on every core in one batch (`LoggedChanges.smallestParallelDecoding`), and
    /// small enough not to matter beside the store.
    static let standardCapacity = 8 << 20
    /// The most bytes one frame needs in memory to be judged: its header and largest payload, and the
    /// rest of the 512-byte sectors they reach (the torn-tail test looks at whole sectors).
    static let largestFrameSpan = LogFormat.recordHeaderLength + LogFormat.maximumPayloadLength + 2 * LogRecordFrames.sectorLength

    /// Opens the segment `path` (a regular file: `FileSystem.openRegularFile`) with an empty window.
    init(path: String, capacity: Int = standardCapacity) throws(StorageError) {
        let descriptor = try FileSystem.openRegularFile(path)
        let size: Int
        do throws(StorageError) {
            size = try FileSystem.size(of: descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        self.path = path
        self.descriptor = descriptor
        // A small file gets a small buffer; one more byte than the file, so that a full read is known to
        // have met its end.
        buffer = .allocate(byteCount: max(64, min(capacity, size + 1)), alignment: 16)
    }

    deinit {
        buffer.deallocate()
        close(descriptor)
    }

    /// The bytes the window holds: file offsets `base ..< base + count`.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0..<count]) }
    /// Whether the window reaches the end of the file.
    var endsFile: Bool { endOfFile == base + count }

    /// The file's length: where a read met its end, or else its size now.
    func length() throws(StorageError) -> Int {
        if let endOfFile { return endOfFile }
        return try FileSystem.size(of: descriptor, path: path)
    }

    /// Moves the window to start at `offset` and fills it: at least `needed` bytes (fewer only at the end
    /// of the file), and as many more as the buffer holds. What the window already held from `offset` on
    /// is kept, not read again.
    mutating func load(from offset: Int, atLeast needed: Int = 0) throws(StorageError) {
        if needed > buffer.count {
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: needed, alignment: 16)
            if offset >= base, offset < base + count {
                grown.baseAddress!.copyMemory(from: buffer.baseAddress! + (offset - base), byteCount: base + count - offset)
                count = base + count - offset
            } else {
                count = 0
            }
            buffer.deallocate()
            buffer = grown
        } else if offset >= base, offset < base + count {
            let kept = base + count - offset
            if offset > base { memmove(buffer.baseAddress!, buffer.baseAddress! + (offset - base), kept) }
            count = kept
        } else {
            count = 0
        }
        base = offset
        if let endOfFile, base + count >= endOfFile { return }
        let room = UnsafeMutableRawBufferPointer(rebasing: buffer[count...])
        let read = try FileSystem.read(descriptor, into: room, at: base + count, path: path)
        count += read
        if read < room.count { endOfFile = base + count }
    }

    /// The offset of the first byte from `offset` on that is not zero, or `nil` when every byte to the end
    /// of the file is zero. Holes of a sparse file are skipped without reading them (`SEEK_DATA`), so a
    /// gigabyte hole costs nothing; zeros written to disk are read, a window at a time. Moves the window.
    mutating func firstNonZeroByte(from offset: Int) throws(StorageError) -> Int? {
        var position = offset
        while true {
            let data = lseek(descriptor, off_t(position), Self.seekData)
            if data < 0 {
                // ENXIO: no data at or after `position`, only holes up to the end. Any other error (a file
                // system without SEEK_DATA): read everything.
                if errno == ENXIO {
                    let size = try FileSystem.size(of: descriptor, path: path)
                    endOfFile = max(position, size)
                    return nil
                }
            } else {
                position = max(position, Int(data))
            }
            try load(from: position)
            if count == 0 { return nil }
            if let found = Self.firstNonZero(in: bytes) { return base + found }
            if endsFile { return nil }
            position = base + count
        }
    }

    /// `lseek`'s `SEEK_DATA`, which the C library declares only for `_GNU_SOURCE` (so Swift's Glibc module
    /// lacks it): the same number on every Linux architecture, another on Darwin.
    #if os(Linux)
    static let seekData: Int32 = 3
    #else
    static let seekData: Int32 = 4
    #endif

    /// The index of the first byte of `bytes` that is not zero; eight bytes at a time.
    static func firstNonZero(in bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        while index + 8 <= bytes.count {
            if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) != 0 { break }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] != 0 { return index }
            index += 1
        }
        return nil
    }
}

extension SegmentWindow {
    /// `LogRecordFrames.estimatedRecordCount(from:)` for the whole segment from `start` on, a window at a
    /// time: what a cut at `start` drops, in bounded memory, with the holes of a sparse file skipped.
    mutating func estimatedRecordCount(from start: Int) throws(StorageError) -> Int {
        var tally = LogRecordFrames.RecordTally()
        var offset = start
        while true {
            try load(from: offset)
            guard count > 0 else { break }
            var stopped = LogRecordFrames(bytes, base: base, endsFile: endsFile, from: offset).count(from: offset, into: &tally)
            if stopped == offset, !tally.zerosReachWindowEnd {
                // One frame needs more than the window holds: a record of up to 16 MiB.
                try load(from: offset, atLeast: Self.largestFrameSpan)
                stopped = LogRecordFrames(bytes, base: base, endsFile: endsFile, from: offset).count(from: offset, into: &tally)
            }
            if tally.zerosReachWindowEnd {
                tally.zerosReachWindowEnd = false
                guard let nonZero = try firstNonZeroByte(from: stopped) else { break }
                offset = max(stopped, nonZero - (LogFormat.recordHeaderLength - 1))
                continue
            }
            if endsFile, stopped >= base + count { break }
            guard stopped > offset else { break }  // cannot happen: a frame always fits the grown window
            offset = stopped
        }
        return tally.finished
    }
}
