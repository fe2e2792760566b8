import EntitledClient

/// What the console says when authentication stands in the way: a refused token, or a server that wants
/// one when none was given. The protocol's own messages speak of `auth` requests; a person at the console
/// needs the option or variable to fix instead.
public enum AuthenticationAdvice {
    /// The sentence for a client error; for a refused token it names where the token came from.
    public static func message(for error: EntitledClientError, tokenOrigin: TokenOrigin?) -> String {
        guard case .authenticationFailed(let address, let failure) = error else { return error.message }
        // The server's message goes on (after "; ") about what the connection may still run; the client
        // has already closed that connection, so only the reason is worth showing.
        let reason = failure.message.firstRange(of: "; ").map { failure.message[..<$0.lowerBound] } ?? failure.message[...]
        let source = tokenOrigin.map { " from \($0.phrase)" } ?? ""
        return "\(address) refused the token\(source) (\(failure.code): \(reason))"
    }

    /// A line of advice after an error response, or `nil`: an `unauthorized` answer when no token was
    /// given means the server requires one.
    public static func hint(for failure: ServerFailure, tokenOrigin: TokenOrigin?) -> String? {
        guard failure.code == .unauthorized, tokenOrigin == nil else { return nil }
        return "this server requires a token: give it with --token-file FILE or the ENTITLED_TOKEN environment variable (or --token)"
    }
}
