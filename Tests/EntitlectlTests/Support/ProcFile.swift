import Foundation

/// Files under Linux's `/proc`, which describe a running process (its arguments, its sockets).
enum ProcFile {
    /// The whole text of the file at `path`, or "" when it cannot be opened (the process has ended).
    ///
    /// Read to its end: these files report a size of 0, and `String(contentsOfFile:)` stops after the
    /// first page of a long one, such as the `/proc/net/tcp` of a busy machine.
    static func text(_ path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }
}
