import NIOConcurrencyHelpers

/// The tokens a server's connections authenticate with, shared by every event loop and replaceable while
/// the server runs (`EntitledServer.reloadAccessTokens()`: SIGHUP and the `reload` operation).
///
/// A lock rather than anything cleverer: the tokens are read once per `auth` request, never on a check,
/// so the lock is not on the hot path, and it makes the swap trivially safe across the loops' threads.
final class AccessTokenSource: Sendable {
    /// The auth file the tokens come from; `nil` when they were given in code (they cannot be reloaded).
    let file: String?
    private let tokens: NIOLockedValueBox<AccessTokens>
    /// Held for a whole reload, so that two at once (a SIGHUP and a `reload`) cannot put their results in
    /// force in the opposite order from the one they read the file in (the older content would win).
    let reloading = NIOLock()

    init(_ tokens: AccessTokens, file: String?) {
        self.tokens = NIOLockedValueBox(tokens)
        self.file = file
    }

    /// The tokens in force now.
    var current: AccessTokens { tokens.withLockedValue { $0 } }

    /// Puts `replacement` in force for every `auth` from now on; returns the tokens it replaced.
    func replace(with replacement: AccessTokens) -> AccessTokens {
        tokens.withLockedValue { current in
            defer { current = replacement }
            return current
        }
    }
}
