import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Files under Linux's `/proc`, which describe a running process (its arguments, its sockets).
enum ProcFile {
    /// The whole text of the file at `path`, or what was read before an error ("" when it cannot be
    /// opened: the process has ended).
    ///
    /// Read to its end: these files report a size of 0, and `String(contentsOfFile:)` stops after the
    /// first page of a long one, such as the `/proc/net/tcp` of a busy machine. Read with `read(2)`, not
    /// `FileHandle.readDataToEndOfFile()`: a process reaped between the open and the read makes the read
    /// fail (ESRCH), which Foundation turns into a crash of the whole test process (`try!` inside it).
    static func text(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
