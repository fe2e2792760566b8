#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Arrays for the store's large hash tables, on huge pages where the system gives them.
///
/// A lookup in a table of millions lands on a random page: with 4 KiB pages nearly every one misses the
/// TLB as well as the cache, and the page walk (two levels of tables in a virtual machine) comes before
/// the load can even start; a prefetch of the entry waits for it too. `perf annotate` on a bulk load of
/// grants showed the prefetches of the user and id index entries charged for such walks. A 2 MiB page
/// covers 512 times as much, so the tables' pages stay in the TLB. Linux's transparent huge pages are
/// often set to `madvise` (Debian's default), so a region is asked for them with `MADV_HUGEPAGE` before
/// it is first touched; elsewhere this is an ordinary array.
enum HugePageArray {
    /// Below this a table is not worth asking for huge pages: it fits the TLB anyway.
    static let smallestAdvised = 4 << 20
    private static let hugePageSize = 2 << 20

    /// An array of `count` copies of `value`, its storage advised for huge pages before it is filled.
    static func make<Element>(repeating value: Element, count: Int) -> [Element] {
        guard count * MemoryLayout<Element>.stride >= smallestAdvised else { return Array(repeating: value, count: count) }
        return Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            adviseHugePages(UnsafeMutableRawBufferPointer(buffer))
            buffer.initialize(repeating: value)
            initialized = count
        }
    }

    /// Asks for huge pages under the whole 2 MiB pages `region` spans. Only advice: a refusal changes
    /// nothing but speed.
    private static func adviseHugePages(_ region: UnsafeMutableRawBufferPointer) {
        #if os(Linux)
        guard let base = region.baseAddress else { return }
        let start = (Int(bitPattern: base) + hugePageSize - 1) & ~(hugePageSize - 1)
        let end = (Int(bitPattern: base) + region.count) & ~(hugePageSize - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(aligned, end - start, MADV_HUGEPAGE)
        #endif
    }
}
