#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The tokens of `--auth FILE`: who may connect, and with which role.
///
/// The file is a JSON array of `{"name": ..., "token": ..., "role": "check" | "admin"}`. Names and tokens
/// are unique; a token has at least `minimumTokenBytes` bytes, so a guessable one is refused at start
/// rather than discovered later.
public struct AccessTokens: Sendable {
    public let entries: [AccessToken]

    /// The shortest token accepted: 16 bytes, such as 32 hexadecimal digits carry 128 bits.
    public static let minimumTokenBytes = 16

    /// Checks `entries` as the auth file's are checked.
    public init(entries: [AccessToken]) throws(AuthFileError) {
        guard !entries.isEmpty else { throw .noTokens }
        var names = Set<String>()
        var secrets = Set<[UInt8]>()
        for (index, entry) in entries.enumerated() {
            if entry.name.isEmpty || entry.name.utf8.count > 256 {
                throw .invalidEntry(index: index, reason: "\"name\" must be 1 to 256 bytes")
            }
            if entry.secret.count < Self.minimumTokenBytes {
                throw .invalidEntry(index: index, reason: "the token of \(entry.name) is shorter than \(Self.minimumTokenBytes) bytes")
            }
            if entry.secret.count > 1024 {
                throw .invalidEntry(index: index, reason: "the token of \(entry.name) is longer than 1024 bytes")
            }
            if !names.insert(entry.name).inserted { throw .duplicateName(entry.name) }
            if !secrets.insert(entry.secret).inserted {
                throw .invalidEntry(index: index, reason: "the token of \(entry.name) is also another entry's")
            }
        }
        self.entries = entries
    }

    /// Reads and checks the auth file at `path`.
    public init(contentsOfFile path: String) throws(AuthFileError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(path: path, reason: Self.systemReason(path: path))
        }
        let decoded: [Entry]
        do {
            decoded = try JSONDecoder().decode([Entry].self, from: data)
        } catch {
            throw .malformed(path: path, reason: Self.describe(error))
        }
        var entries: [AccessToken] = []
        for (index, entry) in decoded.enumerated() {
            guard let role = AccessRole(rawValue: entry.role) else {
                throw .invalidEntry(index: index, reason: "\"role\" must be \"check\", \"writer\" or \"admin\", not \"\(entry.role.prefix(32))\"")
            }
            entries.append(AccessToken(name: entry.name, token: entry.token, role: role))
        }
        try self.init(entries: entries)
    }

    /// The entry whose token is `presented`, if any.
    ///
    /// Compares in constant time for a given presented length: every entry is compared, every byte of the
    /// presented token is looked at, and no comparison stops at the first difference. How long it takes
    /// tells an attacker only the length of what they sent.
    public func authenticate(_ presented: String) -> AccessToken? {
        let bytes = Array(presented.utf8)
        var match: AccessToken?
        for entry in entries where Self.constantTimeEqual(bytes, entry.secret) {
            match = entry
        }
        return match
    }

    /// The entry holding the same secret as `token` (compared in constant time, as `authenticate` does).
    func entry(withSecretOf token: AccessToken) -> AccessToken? {
        var match: AccessToken?
        for entry in entries where Self.constantTimeEqual(token.secret, entry.secret) {
            match = entry
        }
        return match
    }

    static func constantTimeEqual(_ presented: [UInt8], _ secret: [UInt8]) -> Bool {
        guard !presented.isEmpty, !secret.isEmpty else { return false }
        var difference = UInt8(truncatingIfNeeded: presented.count ^ secret.count) | (presented.count == secret.count ? 0 : 1)
        for index in presented.indices {
            difference |= presented[index] ^ secret[index % secret.count]
        }
        return difference == 0
    }

    /// Whether the file at `path` can be read by its group or by others: worth a warning at start.
    public static func isReadableByOthers(path: String) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        return status.st_mode & 0o044 != 0
    }

    private struct Entry: Decodable {
        let name: String
        let token: String
        let role: String
    }

    private static func systemReason(path: String) -> String {
        FileManager.default.fileExists(atPath: path) ? "it cannot be read (permissions?)" : "no such file"
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "entry \(context.codingPath.first?.intValue.map(String.init) ?? "?") has no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let where_ = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return "\(where_.isEmpty ? "the file" : where_): expected a list of {\"name\": ..., \"token\": ..., \"role\": ...} with string values"
        case DecodingError.dataCorrupted:
            return "not valid JSON"
        default:
            return "not valid JSON"
        }
    }
}
