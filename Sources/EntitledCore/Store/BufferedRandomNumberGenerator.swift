#if canImport(Glibc)
import Glibc
#endif

/// The system's random numbers, fetched 512 at a time.
///
/// `SystemRandomNumberGenerator` makes one `getrandom` system call per number; on the grant path that was
/// one system call per write (strace under a 50-connection durable write load). Filling a 4 KiB buffer
/// with one `getentropy`-sized call at a time keeps the same source of randomness at a thirty-second of
/// the calls. Not thread-safe: the store uses it under its write lock.
public struct BufferedRandomNumberGenerator: RandomNumberGenerator, Sendable {
    private var buffer = [UInt64](repeating: 0, count: 512)
    private var position = 512

    public init() {}

    public mutating func next() -> UInt64 {
        if position == buffer.count {
            refill()
            position = 0
        }
        defer { position += 1 }
        return buffer[position]
    }

    /// The number the next `next()` returns, without taking it: the store prefetches where the next
    /// membership id it draws will be looked up.
    public mutating func peek() -> UInt64 {
        if position == buffer.count {
            refill()
            position = 0
        }
        return buffer[position]
    }

    private mutating func refill() {
        #if canImport(Glibc)
        let filled = buffer.withUnsafeMutableBytes { bytes -> Bool in
            // getentropy hands out at most 256 bytes per call.
            for offset in stride(from: 0, to: bytes.count, by: 256) {
                guard getentropy(bytes.baseAddress! + offset, min(256, bytes.count - offset)) == 0 else { return false }
            }
            return true
        }
        if filled { return }
        #endif
        var system = SystemRandomNumberGenerator()
        for index in buffer.indices { buffer[index] = system.next() }
    }
}
