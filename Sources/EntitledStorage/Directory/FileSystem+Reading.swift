#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening and reading the files of a data directory, which someone with write access to it may have
/// replaced by anything: a FIFO (an `open` or a `read` that never returns), a device (endless bytes), a
/// symbolic link (a repair that truncates a file elsewhere), a sparse file of many gigabytes (a read that
/// allocates its size). Every file is opened without following a link and without blocking, and is used
/// only once `fstat` says it is a regular file; segments are then read in bounded pieces
/// (`SegmentWindow`), and a snapshot, which is decoded whole, is checked by its header and read into
/// memory that may fail to come, as an error rather than an abort.
extension FileSystem {
    /// Opens `path` with `flags` (`O_RDONLY`, `O_WRONLY`, `O_RDWR`, maybe with `O_CREAT`) when it is a
    /// regular file. `O_NOFOLLOW` refuses a symbolic link; `O_NONBLOCK` keeps `open` of a FIFO from waiting
    /// for the other end (and changes nothing for a regular file).
    /// - Throws: `StorageError.notARegularFile` naming what the path is instead; `.io` when it cannot be
    ///   opened.
    static func openRegularFile(_ path: String, flags: Int32 = O_RDONLY, mode: mode_t = fileMode) throws(StorageError) -> Int32 {
        let descriptor = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            let openErrno = errno
            // ELOOP: the last component is a link (O_NOFOLLOW). ENXIO: a FIFO without a reader, opened for
            // writing without blocking. Say what the name is rather than how opening it failed.
            var status = stat()
            if openErrno == ELOOP || openErrno == ENXIO, lstat(path, &status) == 0, (status.st_mode & S_IFMT) != S_IFREG {
                throw .notARegularFile(path: path, kind: kind(of: status.st_mode))
            }
            throw .io(operation: "open", path: path, errno: openErrno)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let statErrno = errno
            close(descriptor)
            throw .io(operation: "stat", path: path, errno: statErrno)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw .notARegularFile(path: path, kind: kind(of: status.st_mode))
        }
        return descriptor
    }

    /// What a file of `mode` is, for a message: "a FIFO", "a directory", ...
    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFSOCK: return "a socket"
        case S_IFLNK: return "a symbolic link"
        default: return "a file of unknown type"
        }
    }

    /// The size of the open file `descriptor`, as `fstat` sees it now.
    static func size(of descriptor: Int32, path: String) throws(StorageError) -> Int {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .io(operation: "stat", path: path, errno: errno) }
        return Int(status.st_size)
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file. Retries `EINTR` and
    /// short reads.
    static func read(
        _ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String
    ) throws(StorageError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + filled, buffer.count - filled, off_t(offset + filled))
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .io(operation: "read", path: path, errno: errno) }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Reads the regular file `path` whole into memory taken for it and hands it to `body`; the memory is
    /// given back when `body` returns. For a snapshot, which is decoded whole: `check` first sees the
    /// file's first `headerLength` bytes and its size, and throws when they cannot be the start of a good
    /// file, before any memory is taken for the rest. Memory that cannot be had for a large file is an
    /// error (`ENOMEM`), not an abort of the process.
    static func withWholeFile<Result>(
        _ path: String, headerLength: Int = 0,
        check: (_ header: UnsafeRawBufferPointer, _ size: Int) throws(StorageError) -> Void = { _, _ throws(StorageError) in },
        _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Result
    ) throws(StorageError) -> Result {
        let descriptor = try openRegularFile(path)
        defer { close(descriptor) }
        let size = try size(of: descriptor, path: path)
        if headerLength > 0 {
            let header = UnsafeMutableRawBufferPointer.allocate(byteCount: headerLength, alignment: 8)
            defer { header.deallocate() }
            let count = try read(descriptor, into: header, at: 0, path: path)
            try check(UnsafeRawBufferPointer(rebasing: header[0..<count]), size)
        }
        // `malloc`, which can say no: Swift's own allocations end the process when memory runs out (a
        // sparse file of gigabytes under an address-space limit did: exit 134).
        guard let memory = malloc(max(size, 1)) else { throw .io(operation: "read", path: path, errno: ENOMEM) }
        defer { free(memory) }
        // Fewer bytes than `fstat` said when another thread cut the file meanwhile (the log's preallocator
        // takes back zeros it could not sync; the writer cuts a segment back to its last record): what is
        // read is the file as it is now, not an I/O error.
        let count = try read(descriptor, into: UnsafeMutableRawBufferPointer(start: memory, count: size), at: 0, path: path)
        return try body(UnsafeRawBufferPointer(start: memory, count: count))
    }
}
