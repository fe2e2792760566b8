#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations the storage needs, with errors that name the file. POSIX rather than
/// Foundation because durability depends on exactly which calls happen: `fdatasync` of a file, `fsync`
/// of its directory after a create or rename.
enum FileSystem {
    /// Writes all of `bytes` at the descriptor's current position (retrying short writes).
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(StorageError) {
        if let injected = injectedFault("write", path: path) { throw .io(operation: "write", path: path, errno: injected) }
        var offset = 0
        while offset < bytes.count {
            let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .io(operation: "write", path: path, errno: count == 0 ? EIO : errno) }
            offset += count
        }
    }

    /// Writes all of `bytes` at file offset `offset` (retrying short writes); the descriptor's position
    /// does not move.
    static func writeAll(
        _ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String
    ) throws(StorageError) {
        if let injected = injectedFault("write", path: path) { throw .io(operation: "write", path: path, errno: injected) }
        var written = 0
        while written < bytes.count {
            let count = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw .io(operation: "write", path: path, errno: count == 0 ? EIO : errno) }
            written += count
        }
    }

    /// Writes zeros over `range` of the file, in pieces of at most 64 KiB from one shared zero buffer.
    static func writeZeros(_ descriptor: Int32, _ range: Range<Int>, path: String) throws(StorageError) {
        try zeros.withBytes { (zeros) throws(StorageError) in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let count = min(zeros.count, range.upperBound - offset)
                try writeAll(descriptor, UnsafeRawBufferPointer(rebasing: zeros[0..<count]), at: offset, path: path)
                offset += count
            }
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Cuts the open file `descriptor` to `length` bytes and syncs it.
    static func truncate(_ descriptor: Int32, to length: Int, path: String) throws(StorageError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw .io(operation: "truncate", path: path, errno: errno) }
        try syncData(descriptor, path: path)
    }

    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws(StorageError) {
        try bytes.withBytes { (raw) throws(StorageError) in try writeAll(descriptor, raw, path: path) }
    }

    static func syncData(_ descriptor: Int32, path: String) throws(StorageError) {
        if let injected = injectedFault("fdatasync", path: path) { throw .io(operation: "fdatasync", path: path, errno: injected) }
        #if canImport(Darwin)
        let status = fsync(descriptor)
        #else
        let status = fdatasync(descriptor)
        #endif
        guard status == 0 else { throw .io(operation: "fdatasync", path: path, errno: errno) }
    }

    /// Makes the creation, renaming or removal of entries in `directory` durable.
    static func syncDirectory(_ directory: String) throws(StorageError) {
        if let injected = injectedFault("fsync", path: directory) { throw .io(operation: "fsync", path: directory, errno: injected) }
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(operation: "open", path: directory, errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .io(operation: "fsync", path: directory, errno: errno) }
    }

    /// The mode of every file the server creates in a data directory: log segments and snapshots hold
    /// personal data (user ids, devices, audit entries), so only the server's own user may read them.
    static let fileMode: mode_t = 0o600
    /// The mode of a data directory the server creates (an existing one keeps its own).
    static let directoryMode: mode_t = 0o700

    /// Creates a new file (failing if it exists) for writing, readable by its owner only (`fileMode`).
    static func createFile(_ path: String) throws(StorageError) -> Int32 {
        if let injected = injectedFault("create", path: path) { throw .io(operation: "create", path: path, errno: injected) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw .io(operation: "create", path: path, errno: errno) }
        return descriptor
    }

    static func rename(_ from: String, to: String) throws(StorageError) {
        guard systemRename(from, to) == 0 else { throw .io(operation: "rename", path: from, errno: errno) }
    }

    static func remove(_ path: String) throws(StorageError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw .io(operation: "remove", path: path, errno: errno) }
    }

    static func truncate(_ path: String, to length: Int) throws(StorageError) {
        // Never through a link, never anything but a regular file: a repair must not cut a file outside
        // the directory, and opening a FIFO for writing would wait for a reader.
        let descriptor = try openRegularFile(path, flags: O_WRONLY)
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw .io(operation: "truncate", path: path, errno: errno) }
        guard fsync(descriptor) == 0 else { throw .io(operation: "fsync", path: path, errno: errno) }
    }

    /// Makes `path` and its missing parents: `path` itself for its owner only (`directoryMode`), parents as
    /// `mkdir -p` would.
    static func makeDirectory(_ path: String) throws(StorageError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        let components = path.split(separator: "/")
        for (index, component) in components.enumerated() {
            prefix += component + "/"
            if mkdir(prefix, index == components.count - 1 ? directoryMode : 0o755) != 0, errno != EEXIST {
                throw .io(operation: "mkdir", path: prefix, errno: errno)
            }
        }
    }

    static func listDirectory(_ path: String) throws(StorageError) -> [String] {
        guard let directory = opendir(path) else { throw .io(operation: "list", path: path, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func fileSize(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }
}

/// The C library's `close` and `rename`, named so that methods of the same name cannot shadow them.
func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

private func systemRename(_ from: String, _ to: String) -> Int32 {
    rename(from, to)
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies with typed throws (the standard library's version rethrows `any Error`).
    func withBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        let outcome: Swift.Result<Result, StorageError> = withUnsafeBytes { raw in
            Swift.Result { () throws(StorageError) -> Result in try body(raw) }
        }
        return try outcome.get()
    }
}
