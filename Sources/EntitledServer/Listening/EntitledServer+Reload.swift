import Logging

extension EntitledServer {
    /// Reads the auth file again and puts its tokens in force (SIGHUP and the `reload` operation).
    ///
    /// New tokens authenticate at once. A connection that authenticated with a token the file no longer
    /// lists loses its role at once (it may run `ping`, `hello` and `auth` only, and its watches end), one
    /// whose token's role changed gets the new role; this is a pass over each loop's connections, posted to
    /// the loop, so nothing is added to the path of a request. A file that cannot be read or is not a
    /// valid auth file changes nothing: the tokens in force stay in force, and the error says why.
    ///
    /// Logged with the file, the number of tokens and the names added and removed; never a token.
    /// - Returns: the number of tokens in force now.
    @discardableResult
    public func reloadAccessTokens() throws(TokenReloadError) -> Int {
        guard let source = accessTokens else { throw .noAuthentication }
        guard let file = source.file else { throw .noFile }
        source.reloading.lock()
        defer { source.reloading.unlock() }
        let replacement: AccessTokens
        do throws(AuthFileError) {
            replacement = try AccessTokens(contentsOfFile: file)
        } catch {
            logger.error(
                "the auth file was not reloaded: \(error.message); the tokens in force before stay in force",
                metadata: ["file": "\(file)", "code": "\(error.code)"]
            )
            throw .invalidFile(path: file, error)
        }
        let previous = source.replace(with: replacement)
        let loops = runningLoops
        for loop in loops {
            loop.execute {
                // The tokens in force when the task runs, not `replacement`: after two quick reloads (A, then
                // B), a client may authenticate with a token only B has before A's task runs; measured
                // against A, it would lose the role B gave it, and B's task would no longer see its token.
                let revoked = loop.reauthorizeConnections(with: source.current)
                if revoked > 0 {
                    self.logger.notice("connections lost their role: their token is no longer in the auth file", metadata: ["connections": "\(revoked)"])
                }
            }
        }
        let before = Set(previous.entries.map(\.name))
        let after = Set(replacement.entries.map(\.name))
        logger.notice(
            "reloaded the auth file",
            metadata: [
                "file": "\(file)", "tokens": "\(replacement.entries.count)",
                "added": "\(after.subtracting(before).sorted().joined(separator: ","))",
                "removed": "\(before.subtracting(after).sorted().joined(separator: ","))",
            ]
        )
        if AccessTokens.isReadableByOthers(path: file) {
            logger.warning("the auth file can be read by other users of this machine; chmod 600 it", metadata: ["file": "\(file)"])
        }
        return replacement.entries.count
    }
}
