#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ServedConnection {
    private static let checkOfUser: StaticString = #"{"op":"check","user":""#

    /// When `input` holds several lines (a pipelining client), starts loading the store entries of the
    /// users their checks name before the first is answered (`EntitlementStore.prefetchingUsers`): their
    /// cache misses then overlap instead of stalling each check in turn. Only checks written the usual way
    /// (`op` then `user`) are looked at; any other line is simply not prefetched. A hint: nothing is
    /// decided here, every line is still read in full by `answer`.
    func prefetchPipelinedChecks(upTo lines: Int) {
        input.bytes.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress,
                let firstEnd = memchr(base, Int32(UInt8(ascii: "\n")), bytes.count),
                base.distance(to: UnsafeRawPointer(firstEnd)) + 1 < bytes.count
            else { return }  // one line (or none): nothing to overlap
            let prefix = Self.checkOfUser.utf8Start
            let prefixCount = Self.checkOfUser.utf8CodeUnitCount
            processor.store.prefetchingUsers { prefetchUser in
                var start = 0
                var remaining = lines
                while remaining > 0, start < bytes.count,
                    let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start)
                {
                    let end = base.distance(to: UnsafeRawPointer(newline))
                    let userStart = start + prefixCount
                    if userStart < end, memcmp(base + start, prefix, prefixCount) == 0,
                        let quote = memchr(base + userStart, Int32(UInt8(ascii: "\"")), end - userStart)
                    {
                        let userEnd = base.distance(to: UnsafeRawPointer(quote))
                        prefetchUser(UnsafeRawBufferPointer(rebasing: bytes[userStart..<userEnd]))
                    }
                    start = end + 1
                    remaining -= 1
                }
            }
        }
    }
}
