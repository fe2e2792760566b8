#if canImport(Glibc)
import Glibc
#endif

/// A file holding a secret (a token, an API key, a webhook secret) on its first line, without surrounding
/// whitespace (so a file written with `echo`, or with Windows line ends, works). The secret never passes
/// through argv or the environment, which other users (`ps`) or child processes may see. The one reader
/// of `entitlectl --token-file` and of `entitled-stores`' secret files.
public enum TokenFile {
    /// The longest first line read; the server's tokens are at most 1 KiB, so anything longer is not one.
    public static let maximumLineLength = 64 * 1024

    /// Why the secret could not be read. The messages never quote the file's contents.
    public enum Failure: Error, Sendable, Hashable {
        /// `what`: what the file holds, as the messages name it (`token`, `Stripe webhook secret`).
        case unreadable(path: String, what: String, reason: String)
        case empty(path: String, what: String)
        case tooLong(path: String, what: String)

        public var message: String {
            switch self {
            case .unreadable(let path, let what, let reason): "cannot read the \(what) file \(path): \(reason)"
            case .empty(let path, let what): "the \(what) file \(path) is empty: its first line must hold the \(what)"
            case .tooLong(let path, let what):
                "the first line of the \(what) file \(path) is longer than \(TokenFile.maximumLineLength) bytes; it is not a \(what)"
            }
        }
    }

    /// The secret on the first line of the file at `path`; `what` names it in the failures.
    public static func readToken(atPath path: String, what: String = "token") throws(Failure) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, what: what, reason: systemReason(errno)) }
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
                throw .unreadable(path: path, what: what, reason: systemReason(errno))
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        let firstLine = bytes.prefix { $0 != newline }
        guard firstLine.count <= maximumLineLength else { throw .tooLong(path: path, what: what) }
        let token = String(decoding: firstLine, as: UTF8.self).trimmingWhitespace()
        guard !token.isEmpty else { throw .empty(path: path, what: what) }
        return token
    }

    /// Whether the group or others may read the file at `path`: a token there is everyone's.
    public static func isReadableByOthers(path: String) -> Bool {
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
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
