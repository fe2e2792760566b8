/// Why an auth file was refused. Never quotes a token.
public enum AuthFileError: Error, Sendable, Hashable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case malformed(path: String, reason: String)
    /// The file lists no token: nobody could connect.
    case noTokens
    case invalidEntry(index: Int, reason: String)
    case duplicateName(String)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .unreadable: "auth_file_unreadable"
        case .malformed: "auth_file_malformed"
        case .noTokens: "auth_file_empty"
        case .invalidEntry: "auth_file_invalid_entry"
        case .duplicateName: "auth_file_duplicate_name"
        }
    }

    /// A sentence a person can act on.
    public var message: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the auth file \(path): \(reason)"
        case .malformed(let path, let reason):
            "the auth file \(path) must be a JSON list of {\"name\": ..., \"token\": ..., \"role\": \"check\", \"writer\" or \"admin\"}: \(reason)"
        case .noTokens: "the auth file lists no token, so no client could connect"
        case .invalidEntry(let index, let reason): "entry \(index) of the auth file: \(reason)"
        case .duplicateName(let name): "the auth file names \(name) more than once"
        }
    }

    /// What is wrong, for a sentence that has already named the file (a reload's answer).
    public var problem: String {
        switch self {
        case .unreadable(_, let reason): "cannot read it: \(reason)"
        case .malformed(_, let reason):
            "it must be a JSON list of {\"name\": ..., \"token\": ..., \"role\": \"check\", \"writer\" or \"admin\"}: \(reason)"
        case .noTokens: "it lists no token, so no client could connect"
        case .invalidEntry(let index, let reason): "entry \(index): \(reason)"
        case .duplicateName(let name): "it names \(name) more than once"
        }
    }

    public var description: String { message }
}
