#if canImport(Glibc)
import Glibc
#endif

/// The file of `--token-file`: the token is its first line, without surrounding whitespace (so a file
/// written with `echo`, or with Windows line ends, works). It never passes through argv or the
/// environment, which other users (`ps`) or child processes may see.
enum TokenFile {
    /// The longest first line read; the server's tokens are at most 1 KiB, so anything longer is not one.
    static let maximumLineLength = 64 * 1024

    /// Why the token could not be read. The messages never quote the file's contents.
    enum Failure: Error {
        case unreadable(path: String, reason: String)
        case empty(path: String)
        case tooLong(path: String)

        var message: String {
            switch self {
            case .unreadable(let path, let reason): "cannot read the token file \(path): \(reason)"
            case .empty(let path): "the token file \(path) is empty: its first line must hold the token"
            case .tooLong(let path): "the first line of the token file \(path) is longer than \(TokenFile.maximumLineLength) bytes; it is not a token"
            }
        }
    }

    /// The token on the first line of the file at `path`.
    static func readToken(atPath path: String) throws(Failure) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, reason: systemReason(errno)) }
        defer { close(descriptor) }
        let newline = UInt8(ascii: "\n")
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // Only the first line is wanted: stop reading at its end, so a large file is not read whole.
        while !bytes.contains(newline), bytes.count <= maximumLineLength {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                // A directory opens, and fails here (EISDIR).
                throw .unreadable(path: path, reason: systemReason(errno))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        let firstLine = bytes.prefix { $0 != newline }
        guard firstLine.count <= maximumLineLength else { throw .tooLong(path: path) }
        let token = String(decoding: firstLine, as: UTF8.self).trimmingWhitespace()
        guard !token.isEmpty else { throw .empty(path: path) }
        return token
    }

    /// Whether the group or others may read the file at `path`: a token there is everyone's.
    static func isReadableByOthers(path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        return status.st_mode & 0o044 != 0
    }

    /// The system's text for `code`, continuing a sentence: `no such file or directory`.
    private static func systemReason(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return (text.first?.lowercased() ?? "") + text.dropFirst()
    }
}

extension String {
    /// The text without the whitespace (spaces, tabs, carriage returns, ...) at either end.
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
