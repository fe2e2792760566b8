extension ServedConnection {
    /// `readAndAnswer` for a TLS connection: read encrypted bytes, decrypt them into `input`, answer the
    /// complete lines, and send what the handshake needs.
    func readTLS(_ tls: TLSSession) {
        guard let count = readOnce(into: &tls.scratch) else { return }
        if count == 0 {
            endOfInput()
            return
        }
        do {
            try tls.decrypt(into: &input)
        } catch {
            // Not TLS, a failed handshake or a forged record: nothing can be answered on this stream.
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
}
