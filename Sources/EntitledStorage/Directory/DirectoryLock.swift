#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// An exclusive `flock` on `<data directory>/LOCK`, held for as long as the server runs, so that two
/// servers never write one data directory. The kernel releases it when the process dies, even by kill -9,
/// so a crash never leaves a stale lock. The file holds the holder's process id, for the error message.
final class DirectoryLock: Sendable {
    private let descriptor: Int32
    /// Guards against closing the descriptor twice (its number may belong to another file by then).
    private let released = NIOLock()
    nonisolated(unsafe) private var isReleased = false

    init(directory: String) throws(StorageError) {
        let path = directory + "/LOCK"
        // A regular file only, never through a link: someone who can write the directory must not make the
        // server truncate and write another file, or hang on a FIFO.
        let descriptor = try FileSystem.openRegularFile(path, flags: O_RDWR | O_CREAT)
        var waited = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let lockErrno = errno
            var holder = [UInt8](repeating: 0, count: 64)
            let count = holder.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            let pid = trimmingWhitespace(String(decoding: holder.prefix(max(0, count)), as: UTF8.self))
            // Held under this very process's id after this process released it: a child this process
            // forked meanwhile still has the lock's file open until it runs `exec` (which closes it,
            // O_CLOEXEC), a matter of microseconds, or of milliseconds on a loaded machine. Seen in the
            // test suite, which reopens directories while other tests spawn servers. Wait that out, up
            // to a second; a real second holder in this process still fails after it.
            if lockErrno == EWOULDBLOCK, pid == String(getpid()), waited < 100 {
                waited += 1
                usleep(10_000)
                continue
            }
            close(descriptor)
            guard lockErrno == EWOULDBLOCK else { throw .io(operation: "lock", path: path, errno: lockErrno) }
            throw .locked(directory: directory, holder: pid.isEmpty ? "process id unknown" : "process \(pid)")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = descriptor
    }

    /// Releases the lock. Releasing twice does nothing.
    func release() {
        released.lock()
        defer { released.unlock() }
        guard !isReleased else { return }
        isReleased = true
        close(descriptor)
    }
}

/// `text` without the whitespace and newlines at either end: what Foundation's
/// `trimmingCharacters(in: .whitespacesAndNewlines)` did (the Unicode White_Space scalars), written out
/// so that the storage does not need Foundation.
private func trimmingWhitespace(_ text: String) -> String {
    let scalars = text.unicodeScalars
    guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
    else { return "" }
    return String(scalars[first...last])
}
