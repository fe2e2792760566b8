import Dispatch
import EntitledCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SnapshotFile {
    /// The cores a snapshot's memberships are decoded on.
    static let decodingThreads = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))

    /// Below this many memberships a snapshot is decoded on one thread: starting the others would cost
    /// more than they save.
    static let smallestParallelDecoding = 4 * MembershipTable.chunkSize

    /// Reads the `count` memberships at `reader`'s offset, written in format `version`, and moves past them.
    ///
    /// A large table is decoded on every core (`threads`): a first pass only finds where each chunk's
    /// worth of memberships starts (`skipMembership`, which builds nothing), then each thread decodes a
    /// run of those blocks into a table of its own, and the tables are joined. Decoding, not the pass,
    /// is where the time goes: at a restart of a million memberships it was a third of the time (perf),
    /// the rest being the indexes built from the table afterwards.
    static func readMemberships(
        count: UInt64, version: UInt32, from reader: inout BinaryReader, threads: Int = decodingThreads,
        progress: LoadingProgress = LoadingProgress()
    ) throws(BinaryReader.Malformed) -> MembershipTable {
        // At most what the body can hold (a membership takes more than 16 bytes): the count is not trusted.
        progress.expect(Int(min(count, UInt64(reader.remaining / 16))))
        guard threads > 1, count >= UInt64(smallestParallelDecoding) else {
            var table = MembershipTable()
            for _ in 0..<count {
                table.append(try reader.readMembership(version: version))
                if table.count % MembershipTable.chunkSize == 0 { progress.advance(by: MembershipTable.chunkSize) }
            }
            progress.advance(by: table.count % MembershipTable.chunkSize)
            return table
        }
        // `count` is not trusted: the starts are collected as memberships are found, and a count larger
        // than the body runs out of bytes here.
        let chunk = UInt64(MembershipTable.chunkSize)
        var starts: [Int] = []
        for index in 0..<count {
            if index % chunk == 0 { starts.append(reader.offset) }
            try reader.skipMembership(version: version)
        }
        starts.append(reader.offset)
        let blocks = starts.count - 1
        let workers = min(threads, blocks)
        var results = [Result<MembershipTable, BinaryReader.Malformed>](repeating: .success(MembershipTable()), count: workers)
        let (bytes, blockStarts) = (UncheckedSendable(reader.bytes), starts)
        results.withUnsafeMutableBufferPointer { results in
            let results = UncheckedSendable(results)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let run = (blocks * worker / workers)..<(blocks * (worker + 1) / workers)
                results.value[worker] = decodeBlocks(run, startingAt: blockStarts, count: count, version: version, in: bytes.value, progress: progress)
            }
        }
        // In order, so that the error reported is the first in the file.
        var tables: [MembershipTable] = []
        for result in results { tables.append(try result.get()) }
        return MembershipTable(joining: tables)
    }

    /// Decodes blocks `run` (block `b` holds memberships `b × chunkSize` onwards and ends where block
    /// `b + 1` starts) into one table.
    private static func decodeBlocks(
        _ run: Range<Int>, startingAt starts: [Int], count: UInt64, version: UInt32, in bytes: UnsafeRawBufferPointer,
        progress: LoadingProgress
    ) -> Result<MembershipTable, BinaryReader.Malformed> {
        var table = MembershipTable()
        do throws(BinaryReader.Malformed) {
            for block in run {
                var reader = BinaryReader(bytes, offset: starts[block])
                let first = UInt64(block * MembershipTable.chunkSize)
                for _ in first..<min(first + UInt64(MembershipTable.chunkSize), count) {
                    table.append(try reader.readMembership(version: version))
                }
                guard reader.offset == starts[block + 1] else {
                    // The pass that found the blocks and the decoder disagree on where a membership ends.
                    throw BinaryReader.Malformed(offset: reader.offset, problem: "a membership ends at \(reader.offset), where the next was found at \(starts[block + 1])")
                }
                progress.advance(by: Int(min(first + UInt64(MembershipTable.chunkSize), count) - first))
            }
            return .success(table)
        } catch {
            return .failure(error)
        }
    }
}

