#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Appends bytes to memory reserved beforehand, with no capacity checks of its own.
///
/// Written by hand for the check answer: `ByteBuffer.writeStaticString` checks capacity, uniqueness and
/// exclusive access on every call, about 170 instructions in callgrind, and a check answer took four
/// calls. Reserving once and copying here costs a few dozen. The caller reserves enough for everything
/// it appends (`precondition`-checked in debug builds).
struct UnsafeLineWriter {
    private let memory: UnsafeMutableRawBufferPointer
    /// How many bytes have been appended.
    private(set) var count = 0

    init(_ memory: UnsafeMutableRawBufferPointer) {
        self.memory = memory
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        assert(count + bytes.count <= memory.count, "UnsafeLineWriter: more bytes than were reserved")
        guard let source = bytes.baseAddress, let base = memory.baseAddress else { return }
        memcpy(base + count, source, bytes.count)
        count += bytes.count
    }
}
