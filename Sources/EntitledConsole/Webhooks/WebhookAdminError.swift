/// Why a `webhooks` command got no answer to show. Each message names entitled-stores' address and what
/// to change; none ever shows the token.
public enum WebhookAdminError: Error, Sendable, Hashable {
    /// No admin token was given, so nothing was sent.
    case missingToken(address: String)
    /// The token file (or variable) could not be read; `reason` says why.
    case unreadableToken(reason: String)
    /// `--stores` is not a URL the console can send to.
    case badAddress(address: String, reason: String)
    /// Nothing answered at the address (refused, unknown host, timed out).
    case unreachable(address: String, reason: String)
    /// 401: the token is not the webhooks file's admin token; `origin` is where it came from.
    case refusedToken(address: String, origin: String)
    /// 404: an unknown endpoint or message, or routes not served; `reason` is entitled-stores' line.
    case notFound(address: String, reason: String)
    /// Any other status, with the body's first line.
    case unexpectedStatus(address: String, status: Int, body: String)
    /// An answer the console cannot read.
    case malformed(address: String, what: String)

    /// One line: what went wrong, and the option or command that puts it right.
    public var message: String {
        switch self {
        case .missingToken(let address):
            "the webhook admin routes of \(address) need the admin token: give its file with --stores-token-file PATH "
                + "(the webhooks file's admin-token-file) or set ENTITLECTL_STORES_TOKEN (nothing was sent)"
        case .unreadableToken(let reason):
            reason
        case .badAddress(let address, let reason):
            "--stores \(address) is not a URL entitlectl can use: \(reason) (such as http://127.0.0.1:7118)"
        case .unreachable(let address, let reason):
            "cannot reach entitled-stores at \(address) (\(reason)): is entitled-stores serve --webhooks running there? "
                + "Name its address with --stores URL"
        case .refusedToken(let address, let origin):
            "\(address) refused the admin token from \(origin) (401): it must be the token of the webhooks file's admin-token-file"
        case .notFound(let address, let reason):
            "\(address): \(reason)"
        case .unexpectedStatus(let address, let status, let body):
            "\(address) answered HTTP \(status)" + (body.isEmpty ? "" : ": \(body)")
        case .malformed(let address, let what):
            "\(address) sent \(what)"
        }
    }

    /// How the command ends: 404 is entitled-stores' answer (status 1, as a server's error is); the rest
    /// stand in the way of any answer (status 2, as a refused token or a closed port does for the server).
    public var outcome: CommandOutcome {
        switch self {
        case .missingToken, .unreadableToken, .badAddress: .usageError
        case .notFound, .unexpectedStatus: .failedOnServer
        case .unreachable, .refusedToken, .malformed: .connectionError
        }
    }
}
