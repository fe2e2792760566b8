import Dispatch
import EntitledCore


/// The contents of a log segment's records, decoded from their frames: the changes of the records before
/// the first that does not decode, and why that one does not.
struct LoggedChanges {
    var changes: [LoggedChange] = []
    /// The first record that does not decode (it is `changes.count`), with the offset in its payload.
    var failure: BinaryReader.Malformed?

    /// Below this many records a segment is decoded on one thread.
    static let smallestParallelDecoding = 16_384

    /// Decodes `records`, written in format `version` (2 or later: each states its own time), on `threads`
    /// threads for a large segment: each decodes a run of them, and the runs are joined in order. At a
    /// restart with a million grants in the log, decoding was about a third of the replay (perf).
    static func decode(_ records: ArraySlice<LogRecordFrames.Record>, version: UInt32, threads: Int = SnapshotFile.decodingThreads) -> LoggedChanges {
        guard threads > 1, records.count >= smallestParallelDecoding else {
            var undated = Timestamp(millisecondsSinceEpoch: 0)
            return decodeInOrder(records, version: version, undatedTime: &undated)
        }
        let workers = min(threads, records.count)
        var runs = [LoggedChanges](repeating: LoggedChanges(), count: workers)
        let (frames, count) = (UncheckedSendable(records), records.count)
        runs.withUnsafeMutableBufferPointer { runs in
            let runs = UncheckedSendable(runs)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                let first = frames.value.startIndex
                let run = (first + count * worker / workers)..<(first + count * (worker + 1) / workers)
                var undated = Timestamp(millisecondsSinceEpoch: 0)
                runs.value[worker] = decodeInOrder(frames.value[run], version: version, undatedTime: &undated)
            }
        }
        // The first run is taken as it is; only the others are copied behind it.
        var joined = runs[0]
        for run in runs.dropFirst() where joined.failure == nil {
            joined.changes += run.changes
            joined.failure = run.failure
        }
        return joined
    }

    /// Decodes `records` one after the other, stopping at the first that does not decode. A version 1
    /// record, which states no time, is dated `undatedTime`, the newest time stated before it.
    static func decodeInOrder(
        _ records: some Collection<LogRecordFrames.Record>, version: UInt32, undatedTime: inout Timestamp
    ) -> LoggedChanges {
        var decoded = LoggedChanges()
        decoded.changes.reserveCapacity(records.count)
        for record in records {
            var reader = BinaryReader(record.payload)
            do throws(BinaryReader.Malformed) {
                let logged = try reader.readLoggedChange(version: version, undatedTime: undatedTime)
                undatedTime = max(undatedTime, logged.context.recordedAt)
                decoded.changes.append(logged)
            } catch {
                decoded.failure = error
                break
            }
        }
        return decoded
    }
}

