import EntitledWire

/// Why the auth file was not reloaded. The tokens in force before stay in force.
public enum TokenReloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server requires no authentication: there is nothing to reload.
    case noAuthentication
    /// The server's tokens were given in code, not read from a file.
    case noFile
    /// The file at `path` cannot be read or is not a valid auth file.
    case invalidFile(path: String, AuthFileError)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .noAuthentication: "reload_without_auth"
        case .noFile: "reload_without_file"
        case .invalidFile(_, let error): error.code
        }
    }

    /// A sentence a person can act on: for a broken file, the file, what is wrong with it and that nothing
    /// changed. Never quotes a token.
    public var message: String {
        switch self {
        case .noAuthentication: "this server was started without --auth, so it has no tokens to reload"
        case .noFile: "this server's tokens were not read from a file, so they cannot be reloaded"
        case .invalidFile(let path, let error):
            "the auth file \(path) was not reloaded: \(error.problem); the tokens in force before stay in force"
        }
    }

    public var description: String { message }

    /// The answer to a `reload` request: the request's mistake (`bad_request`) when the server has nothing
    /// to reload, a server-side problem (`internal`) when its file is broken: the request was right, the
    /// file on the server's machine is not, and no other code says that better (`unavailable` means the
    /// server cannot take writes, `conflict` a request that contradicts an earlier one). The message says the rest.
    var wireError: WireError {
        switch self {
        case .noAuthentication, .noFile: WireError(.badRequest, message)
        case .invalidFile: WireError(.internal, message)
        }
    }
}
