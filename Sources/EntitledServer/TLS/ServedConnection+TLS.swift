import NIOCore

extension ServedConnection {
    /// `readAndAnswer` for a TLS connection: read encrypted bytes, decrypt them into `input`, answer the
    /// complete lines, and send what the handshake needs.
    func readTLS(_ tls: TLSSession) {
        guard let count = readOnce(into: &tls.scratch) else { return }
        if count == 0 {
            endOfInput()
            return
        }
        if awaitsFirstBytes {
            awaitsFirstBytes = false
            if tls.scratch.readableBytesView.first != Self.tlsHandshakeRecord {
                refusePlainTextClient()
                return
            }
        }
        do {
            try tls.decrypt(into: &input.bytes)
        } catch {
            // A failed handshake or a forged record: nothing can be answered on this stream.
            context.logger.debug("closing a TLS connection: \(error)", metadata: ["peer": "\(peerDescription)"])
            close()
            return
        }
        if tls.isInputClosed {
            endOfInput()  // answers what is left, a last line without `\n` included, then closes
            return
        }
        answerCompleteLines()
        sendAnswers()
    }

    /// The first byte a TLS client sends: the type of a handshake record (its ClientHello). A request line
    /// starts with `{` (or blank space), so the first byte tells a TLS client from a plain-text one.
    static let tlsHandshakeRecord: UInt8 = 0x16

    /// What a plain-text client on a TLS port gets, in plain text, instead of a silent close: the one line
    /// it can read, naming the fix.
    static let tlsRequiredLine: [UInt8] = Array(
        #"{"ok":false,"error":{"code":"tls_required","message":"this port speaks TLS: connect with TLS (entitlectl --tls, EntitledClientTLS, Python tls=)"}}"#
            .utf8
    ) + [UInt8(ascii: "\n")]

    /// What a TLS client on a plain port gets. It cannot read the line, but its TLS library fails at once on
    /// the first bytes, which are no TLS record ("wrong version number"), rather than wait for a
    /// ServerHello that never comes; the clients of this package say the port does not speak TLS. A person
    /// reading the bytes (`openssl s_client`, a capture) sees why.
    static let notTLSLine: [UInt8] = Array(
        #"{"ok":false,"error":{"code":"bad_request","message":"this port speaks plain text, not TLS: connect without TLS"}}"#
            .utf8
    ) + [UInt8(ascii: "\n")]

    /// The client of a TLS port sent plain text: drop TLS, send `tlsRequiredLine` in plain text, and end
    /// the connection without a reset (so the client reads the line first; see `drain`).
    private func refusePlainTextClient() {
        context.logger.debug("a plain-text client on the TLS port: told to use TLS", metadata: ["peer": "\(peerDescription)"])
        tls?.discard()
        tls = nil
        answers.ready.writeBytes(Self.tlsRequiredLine)
        drain()
    }

    /// On a plain connection's first read: when the client opened with a TLS handshake, answers
    /// `notTLSLine` and ends the connection (true), else lets the lines be answered (false). Called once
    /// per connection, so requests never pay for it.
    func refusesTLSClient() -> Bool {
        awaitsFirstBytes = false
        guard input.bytes.readableBytesView.first == Self.tlsHandshakeRecord else { return false }
        context.logger.debug("a TLS client on a plain-text port: closed", metadata: ["peer": "\(peerDescription)"])
        input.clear()
        answers.ready.writeBytes(Self.notTLSLine)
        drain()
        return true
    }
}
