import EntitledCore
import Logging

/// The segment file being written: opened with its header, appended to, synced, closed. On the writer
/// thread, or in `start` before it runs.
extension LogWriter {
    // MARK: Segment files (writer thread, or `start` before it runs)

    func openSegment(firstSequence: UInt64) throws(StorageError) {
        let path = directory + "/" + LogFormat.segmentName(firstSequence: firstSequence)
        let descriptor = try FileSystem.createFile(path)
        let header = LogFormat.segmentHeader(firstSequence: firstSequence)
        segment = (descriptor, path, firstSequence, header.count)
        try FileSystem.writeAll(descriptor, header, path: path)
        // The first zeros go with the header's sync, so the first records need not wait for the
        // preallocator's first step. Only ever a cost saving: a disk too full for them still takes records.
        var zeroedEnd = header.count
        if let preallocator, preallocator.tuning.initialZeros > 0 {
            let zeros = header.count..<(header.count + preallocator.tuning.initialZeros)
            do throws(StorageError) {
                try FileSystem.writeZeros(descriptor, zeros, path: path)
                zeroedEnd = zeros.upperBound
            } catch {
                logger.warning("could not prepare zero-filled log space: \(error.message). The log goes on; its syncs cost more")
                try FileSystem.truncate(descriptor, to: header.count, path: path)
            }
        }
        try FileSystem.syncData(descriptor, path: path)
        try FileSystem.syncDirectory(directory)
        preallocator?.adopt(descriptor: descriptor, path: path, recordsEnd: header.count, zeroedEnd: zeroedEnd)
    }

    /// Makes the segment durable and closes it, cutting off the zeros after its records first.
    func closeSegment() throws(StorageError) {
        guard let segment else { return }
        // A segment is complete once a newer one exists: make it durable whatever the policy (the cut
        // syncs too). Cut whenever zeros were prepared, also by a step that failed half-way.
        if let preallocator {
            preallocator.release()
            try FileSystem.truncate(segment.descriptor, to: segment.end, path: segment.path)
        } else {
            try FileSystem.syncData(segment.descriptor, path: segment.path)
        }
        closeDescriptor(segment.descriptor)
        self.segment = nil
    }

    func writeToSegment(_ bytes: ArraySlice<UInt8>) throws(StorageError) {
        guard !bytes.isEmpty, let current = segment else { return }
        let end = current.end + bytes.count
        preallocator?.reserve(through: end)
        let result: Result<Void, StorageError> = bytes.withUnsafeBytes { raw in
            Result { () throws(StorageError) in
                try FileSystem.writeAll(current.descriptor, raw, at: current.end, path: current.path)
            }
        }
        try result.get()
        segment?.end = end
    }

    func syncSegment() throws(StorageError) {
        guard let segment else { return }
        try FileSystem.syncData(segment.descriptor, path: segment.path)
    }
}
