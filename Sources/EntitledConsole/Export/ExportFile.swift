#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file an export is written to, complete or not at all: the lines go to a temporary file beside it
/// (`.NAME.export-XXXXXX`, mode 0600, in the same directory so the rename cannot cross file systems),
/// which `finish()` syncs and renames to the path; `discard()` (or a file never finished) removes it.
/// An existing file at the path is replaced only by a complete export.
///
/// Mode 0600 because an export holds every customer's memberships: nobody else on the machine reads it.
public final class ExportFile: ExportSink {
    /// Where the export goes once complete.
    public let path: String
    /// Where it is written meanwhile.
    public let temporaryPath: String
    private var descriptor: Int32
    private var finished = false

    /// Creates the temporary file. Nothing is asked of the server before this succeeds, so a path that
    /// cannot be written fails at once.
    /// - Throws: `cannotWrite` when the path names a directory, or the temporary file cannot be created
    ///   (no such directory, no permission).
    public init(path: String) throws(ExportFailure) {
        self.path = path
        let (directory, name) = Self.split(path)
        guard !name.isEmpty, !Self.isDirectory(path) else {
            throw .cannotWrite(path: path, reason: "it is a directory; name a file in it")
        }
        var template = Array((directory + "." + name + ".export-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            let code = errno
            let shown = directory.isEmpty ? "." : directory.count > 1 ? String(directory.dropLast()) : directory
            throw .cannotWrite(path: path, reason: "cannot create a file in \(shown): \(Self.systemError(code))")
        }
        // mkstemp creates the file 0600 already; said again so that no libc's choice can widen it.
        _ = fchmod(descriptor, 0o600)
        self.descriptor = descriptor
        self.temporaryPath = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        InterruptCleanup.register(temporaryPath)
    }

    deinit {
        if !finished { discard() }
    }

    public func write(_ lines: [String]) throws(ExportFailure) {
        guard !lines.isEmpty else { return }
        var text = lines.joined(separator: "\n")
        text.append("\n")
        let failure: Int32? = text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw .cannotWrite(path: path, reason: "writing \(temporaryPath): \(Self.systemError(failure))") }
    }

    /// Syncs the file to disk, then renames it to `path` and syncs the directory, so that what the path
    /// names after a crash is either the complete export or what was there before.
    public func finish() throws(ExportFailure) {
        guard fsync(descriptor) == 0 else {
            let code = errno
            throw .cannotWrite(path: path, reason: "syncing \(temporaryPath): \(Self.systemError(code))")
        }
        let closed = close(descriptor)
        let closeCode = errno
        descriptor = -1
        // A close that fails (an NFS server's late write error) may have lost what was written.
        guard closed == 0 else { throw .cannotWrite(path: path, reason: "closing \(temporaryPath): \(Self.systemError(closeCode))") }
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            throw .cannotWrite(path: path, reason: "renaming \(temporaryPath) to it: \(Self.systemError(code))")
        }
        finished = true
        // Only now: until the rename, an interruption must still remove the temporary file.
        InterruptCleanup.unregister(temporaryPath)
        let directory = Self.split(path).directory
        let directoryDescriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY)
        if directoryDescriptor >= 0 {
            // Best effort: the file is in place and complete; only its durability through a crash of the
            // machine in the next moments depends on this.
            _ = fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    public func discard() {
        InterruptCleanup.unregister(temporaryPath)
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        if !finished { unlink(temporaryPath) }
        finished = true
    }

    /// `("dir/", "name")` of `dir/name`, `("", "name")` of `name`, with the directory's final slash kept
    /// so that the temporary file's path is the directory and a name put together.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The system's text for `code` (an `errno` taken at once after the call failed), continuing a
    /// sentence: `no such file or directory`.
    static func systemError(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}

/// The system's `write(2)`, which the methods named `write` hide inside `ExportFile`.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
