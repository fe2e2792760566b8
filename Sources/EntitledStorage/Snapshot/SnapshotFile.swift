import EntitledCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes and reads snapshot files.
enum SnapshotFile {
    /// Writes `image` to `directory` durably: a temporary file, `fdatasync`, rename, `fsync` of the
    /// directory. A crash at any point leaves either the old files or the complete new one. The slots of
    /// erased memberships are left out (`StoreImage.withoutErasedMemberships()`): the caller passes an
    /// image without them.
    /// - Returns: the file name and its size in bytes.
    static func write(_ image: StoreImage, to directory: String) throws(StorageError) -> (file: String, bytes: Int) {
        precondition(image.erasedMembershipCount == 0, "a snapshot never holds an erased membership")
        let file = SnapshotFormat.fileName(sequence: image.sequence)
        let path = directory + "/" + file
        let temporaryPath = path + SnapshotFormat.temporarySuffix
        try FileSystem.remove(temporaryPath)
        let descriptor = try FileSystem.createFile(temporaryPath)
        var closed = false
        defer { if !closed { close(descriptor) } }

        // The header's length and checksum are known only at the end: write zeros now, the header last.
        try FileSystem.writeAll(descriptor, [UInt8](repeating: 0, count: SnapshotFormat.headerLength), path: temporaryPath)
        var bodyLength: UInt64 = 0
        var checksum: UInt32 = 0
        try writeBody(of: image) { (chunk) throws(StorageError) in
            checksum = chunk.withUnsafeBytes { CRC32C.update(checksum, with: $0) }
            bodyLength += UInt64(chunk.count)
            try FileSystem.writeAll(descriptor, chunk, path: temporaryPath)
        }

        let header = SnapshotFormat.header(sequence: image.sequence, bodyLength: bodyLength, bodyChecksum: checksum)
        let written = header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == header.count else {
            throw .io(operation: "write", path: temporaryPath, errno: written < 0 ? errno : EIO)
        }
        try FileSystem.syncData(descriptor, path: temporaryPath)
        close(descriptor)
        closed = true
        try FileSystem.rename(temporaryPath, to: path)
        try FileSystem.syncDirectory(directory)
        return (file, SnapshotFormat.headerLength + Int(bodyLength))
    }

    /// Writes the body of a snapshot of `image` in chunks of about 1 MiB, each handed to `emit` (which
    /// must not keep it: the buffer is reused).
    private static func writeBody(of image: StoreImage, emit: ([UInt8]) throws(StorageError) -> Void) throws(StorageError) {
        var chunk = BinaryWriter(capacity: 1 << 20)
        chunk.write(UInt32(image.catalog.count))
        for (entitlement, products) in image.catalog.sorted(by: { $0.key < $1.key }) {
            chunk.write(entitlement)
            chunk.write(UInt32(products.count))
            for product in products { chunk.write(product) }
        }
        chunk.write(UInt64(image.memberships.count))
        for membership in image.memberships {
            chunk.write(membership)
            if chunk.bytes.count >= 1 << 20 { try emit(chunk.bytes); chunk.bytes.removeAll(keepingCapacity: true) }
        }
        // Version 2: the history. Sorted, so that the same state always gives the same bytes.
        chunk.write(UInt64(image.idempotencyKeys.count))
        for (key, slot) in image.idempotencyKeys.sorted(by: { $0.key < $1.key }) {
            chunk.write(key)
            chunk.write(slot)
            if chunk.bytes.count >= 1 << 20 { try emit(chunk.bytes); chunk.bytes.removeAll(keepingCapacity: true) }
        }
        chunk.write(UInt64(image.revisions.count))
        for (slot, revisions) in image.revisions.sorted(by: { $0.key < $1.key }) {
            chunk.write(slot)
            chunk.write(UInt32(revisions.count))
            for revision in revisions { chunk.write(revision) }
            if chunk.bytes.count >= 1 << 20 { try emit(chunk.bytes); chunk.bytes.removeAll(keepingCapacity: true) }
        }
        chunk.write(UInt64(image.catalogRevisions.count))
        for revision in image.catalogRevisions {
            chunk.write(revision.sequence)
            chunk.write(revision.context)
            // Version 3: what the change did, 1 define or 2 undefine.
            chunk.write(UInt8(revision.isRemoval ? 2 : 1))
            chunk.write(revision.entitlement)
            chunk.write(UInt32(revision.products.count))
            for product in revision.products { chunk.write(product) }
        }
        // Version 3: the erasures, which name no one.
        chunk.write(UInt64(image.erasures.count))
        for erasure in image.erasures {
            chunk.write(erasure.sequence)
            chunk.write(erasure.context)
            chunk.write(UInt64(erasure.memberships))
            chunk.write(UInt64(erasure.historyEntries))
        }
        // Version 7: the change feed's index.
        try writeFeed(image.feed, into: &chunk, emit: emit)
        try emit(chunk.bytes)
    }

    /// The whole snapshot of `image`, header and body, as the file would hold it: for a system of record
    /// that keeps snapshots elsewhere (cluster mode keeps them in PostgreSQL). Same checks as a file.
    static func encode(_ image: StoreImage) -> [UInt8] {
        precondition(image.erasedMembershipCount == 0, "a snapshot never holds an erased membership")
        var body: [UInt8] = []
        // Never throws: the sink only appends.
        try! writeBody(of: image) { (chunk) throws(StorageError) in body.append(contentsOf: chunk) }
        let header = SnapshotFormat.header(sequence: image.sequence, bodyLength: UInt64(body.count), bodyChecksum: CRC32C.checksum(body))
        return header + body
    }

    /// Reads and checks a snapshot held in memory; `name` names it in errors.
    static func decode(_ bytes: [UInt8], name: String) throws(StorageError) -> StoreImage {
        try bytes.withBytes { (raw) throws(StorageError) -> StoreImage in try decode(raw, file: name) }
    }

    /// Reads and checks the snapshot `file` in `directory`, telling `progress` how many memberships it
    /// holds and how many are decoded.
    ///
    /// The snapshot is the state, decoded whole, so it is read whole; but only once its header passed its
    /// checks against the file's size (`checkHeader`): a file that is no snapshot, or whose header does
    /// not announce the body the file holds, is refused before memory is taken for it. A snapshot too
    /// large for the memory the process may have is an error (`ENOMEM`), not an abort.
    static func read(_ file: String, in directory: String, progress: LoadingProgress = LoadingProgress()) throws(StorageError) -> StoreImage {
        try FileSystem.withWholeFile(
            directory + "/" + file, headerLength: SnapshotFormat.headerLength,
            check: { (header, size) throws(StorageError) in try checkHeader(header, fileSize: size, file: file) }
        ) { (raw) throws(StorageError) -> StoreImage in
            try decode(raw, file: file, progress: progress)
        }
    }

    /// The checks of a snapshot's header that need no more of the file than the header and its size: the
    /// length, the magic, a known version, the header checksum and the body length. The errors are those
    /// `decode` throws for the same problems.
    private static func checkHeader(_ header: UnsafeRawBufferPointer, fileSize: Int, file: String) throws(StorageError) {
        guard fileSize >= SnapshotFormat.headerLength, header.count >= SnapshotFormat.headerLength else {
            throw .corruptSnapshot(file: file, offset: min(fileSize, header.count), problem: "the file ends inside its \(SnapshotFormat.headerLength)-byte header")
        }
        guard Array(header[0..<8]) == SnapshotFormat.magic else {
            throw .corruptSnapshot(file: file, offset: 0, problem: "not an entitled snapshot (bad magic)")
        }
        let version = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        guard SnapshotFormat.readableVersions.contains(version) else {
            throw .corruptSnapshot(file: file, offset: 8, problem: "format version \(version); this server reads versions \(SnapshotFormat.readableVersions.lowerBound) to \(SnapshotFormat.readableVersions.upperBound)")
        }
        let storedHeaderChecksum = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 36, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: header[0..<36])) == storedHeaderChecksum else {
            throw .corruptSnapshot(file: file, offset: 0, problem: "the header fails its checksum")
        }
        let bodyLength = UInt64(littleEndian: header.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        guard UInt64(fileSize - SnapshotFormat.headerLength) == bodyLength else {
            throw .corruptSnapshot(file: file, offset: fileSize, problem: "the header announces a \(bodyLength)-byte body, the file holds \(fileSize - SnapshotFormat.headerLength)")
        }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, file: String, progress: LoadingProgress = LoadingProgress()) throws(StorageError) -> StoreImage {
        func corrupt(_ offset: Int, _ problem: String) -> StorageError {
            .corruptSnapshot(file: file, offset: offset, problem: problem)
        }
        guard bytes.count >= SnapshotFormat.headerLength else {
            throw corrupt(bytes.count, "the file ends inside its \(SnapshotFormat.headerLength)-byte header")
        }
        guard Array(bytes[0..<8]) == SnapshotFormat.magic else { throw corrupt(0, "not an entitled snapshot (bad magic)") }
        var header = BinaryReader(bytes, offset: 8)
        do throws(BinaryReader.Malformed) {
            // The version before the checksum: another version may lay its header out differently.
            let version = try header.readUInt32()
            guard SnapshotFormat.readableVersions.contains(version) else {
                throw BinaryReader.Malformed(offset: 8, problem: "format version \(version); this server reads versions \(SnapshotFormat.readableVersions.lowerBound) to \(SnapshotFormat.readableVersions.upperBound)")
            }
            let storedHeaderChecksum = bytes.loadUnaligned(fromByteOffset: 36, as: UInt32.self).littleEndian
            guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<36])) == storedHeaderChecksum else {
                throw BinaryReader.Malformed(offset: 0, problem: "the header fails its checksum")
            }
            _ = try header.readUInt32()
            let sequence = try header.readUInt64()
            let bodyLength = try header.readUInt64()
            let bodyChecksum = try header.readUInt32()
            guard UInt64(bytes.count - SnapshotFormat.headerLength) == bodyLength else {
                throw BinaryReader.Malformed(offset: bytes.count, problem: "the header announces a \(bodyLength)-byte body, the file holds \(bytes.count - SnapshotFormat.headerLength)")
            }
            let body = UnsafeRawBufferPointer(rebasing: bytes[SnapshotFormat.headerLength...])
            guard CRC32C.checksum(body) == bodyChecksum else {
                throw BinaryReader.Malformed(offset: SnapshotFormat.headerLength, problem: "the body (bytes \(SnapshotFormat.headerLength) to \(bytes.count)) fails its checksum")
            }
            var reader = BinaryReader(bytes, offset: SnapshotFormat.headerLength)
            var catalog: [String: [String]] = [:]
            for _ in 0..<(try reader.readUInt32()) {
                let name = try reader.readString()
                var products: [String] = []
                for _ in 0..<(try reader.readUInt32()) { products.append(try reader.readString()) }
                catalog[name] = products
            }
            let memberships = try readMemberships(count: try reader.readUInt64(), version: version, from: &reader, progress: progress)
            var image = StoreImage(sequence: sequence, memberships: memberships, catalog: catalog)
            if version >= 2 { try readHistory(&reader, version: version, into: &image) }
            guard reader.remaining == 0 else { throw BinaryReader.Malformed(offset: reader.offset, problem: "\(reader.remaining) bytes follow the last section") }
            return image
        } catch {
            throw corrupt(error.offset, error.problem)
        }
    }

    /// Reads the history sections of a version 2 or later snapshot (and from version 7 on the feed's), checking that every position names a
    /// membership.
    private static func readHistory(_ reader: inout BinaryReader, version: UInt32, into image: inout StoreImage) throws(BinaryReader.Malformed) {
        let membershipCount = UInt64(image.memberships.count)
        func position(_ reader: inout BinaryReader) throws(BinaryReader.Malformed) -> UInt32 {
            let start = reader.offset
            let slot = try reader.readUInt32()
            guard UInt64(slot) < membershipCount else {
                throw BinaryReader.Malformed(offset: start, problem: "membership position \(slot) is past the \(membershipCount) memberships")
            }
            return slot
        }
        for _ in 0..<(try reader.readUInt64()) {
            let key = try reader.readString()
            image.idempotencyKeys[key] = try position(&reader)
        }
        for _ in 0..<(try reader.readUInt64()) {
            let slot = try position(&reader)
            var revisions: [MembershipRevision] = []
            for _ in 0..<(try reader.readCount(minimumBytesEach: 30)) { revisions.append(try reader.readRevision(version: version)) }
            image.revisions[slot] = revisions
        }
        for _ in 0..<(try reader.readUInt64()) {
            let sequence = try reader.readUInt64()
            let context = try reader.readChangeContext()
            var isRemoval = false
            if version >= 3 {
                let actionOffset = reader.offset
                switch try reader.readUInt8() {
                case 1: isRemoval = false
                case 2: isRemoval = true
                case let action: throw BinaryReader.Malformed(offset: actionOffset, problem: "unknown catalog action \(action)")
                }
            }
            let entitlement = try reader.readString()
            var products: [String] = []
            for _ in 0..<(try reader.readCount(minimumBytesEach: 4)) { products.append(try reader.readString()) }
            image.catalogRevisions.append(
                CatalogRevision(sequence: sequence, context: context, entitlement: entitlement, products: products, isRemoval: isRemoval)
            )
        }
        guard version >= 3 else { return }
        for _ in 0..<(try reader.readUInt64()) {
            let sequence = try reader.readUInt64()
            let context = try reader.readChangeContext()
            let memberships = try reader.readUInt64()
            let historyEntries = try reader.readUInt64()
            image.erasures.append(
                ErasureRecord(sequence: sequence, context: context, memberships: Int(clamping: memberships), historyEntries: Int(clamping: historyEntries))
            )
        }
        if version >= 7 { image.feed = try readFeed(&reader, sequence: image.sequence) }
    }
}
