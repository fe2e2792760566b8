import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Places that clients which never authenticate cannot keep, against a real `entitled` with `--auth`: a
/// connection is closed `--auth-timeout` after it was accepted unless it authenticated (pinging or a TLS
/// handshake sent a byte at a time does not keep it), and the Unix socket has places of its own, so an
/// operator on the machine gets in while the TCP places are all taken.
@Suite struct AuthenticationDeadlineTests {
    @Test func aConnectionThatDoesNotAuthenticateIsClosedAtTheDeadlineAndOneThatDidIsNot() throws {
        let server = try RunningEntitled(tokens: [.admin], arguments: ["--auth-timeout", "1"])
        // Timed from before the anonymous connection is made, not after the exchanges below: on a loaded
        // machine those can take a good part of the deadline, which runs from the accept.
        let started = Date()
        let anonymous = try RawSocket(port: server.port, timeoutSeconds: 10)
        let authenticated = try RawSocket(port: server.port, timeoutSeconds: 10)
        try authenticated.send(#"{"op":"auth","token":"\#(AuthFileEntry.admin.token)"}"# + "\n")
        #expect(try authenticated.readLine()?.contains(#""ok":true"#) == true)
        // One that authenticated and then lost its role (a wrong token) is not closed by the deadline.
        let demoted = try RawSocket(port: server.port, timeoutSeconds: 10)
        try demoted.send(#"{"op":"auth","token":"\#(AuthFileEntry.admin.token)"}"# + "\n" + #"{"op":"auth","token":"wrong-0123456789abcdef"}"# + "\n")
        #expect(try demoted.readLine()?.contains(#""ok":true"#) == true)
        #expect(try demoted.readLine()?.contains(#""code":"unauthorized""#) == true)
        // The anonymous one keeps talking (ping is allowed without a token), every 0.2 s.
        var closedAfter: Double?
        while Date().timeIntervalSince(started) < 8 {
            try? anonymous.send(#"{"op":"ping"}"# + "\n")
            guard try anonymous.readLine() != nil else {
                closedAfter = Date().timeIntervalSince(started)
                break
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        #expect(closedAfter != nil, "a connection that never authenticated was still open after 8 s")
        #expect((closedAfter ?? 0) >= 0.8, "closed after \(closedAfter ?? 0) s, before its deadline")
        try authenticated.send(#"{"op":"ping"}"# + "\n")
        #expect(try authenticated.readLine()?.contains(#""ok":true"#) == true, "the authenticated connection was closed")
        try demoted.send(#"{"op":"ping"}"# + "\n")
        #expect(try demoted.readLine()?.contains(#""ok":true"#) == true, "a connection that had authenticated was closed by the deadline")
    }

    @Test func aTLSHandshakeSentAByteAtATimeIsClosedAtTheDeadline() throws {
        let server = try RunningEntitled(
            tokens: [.admin], arguments: ["--tls-cert", TestCertificates.certificate, "--tls-key", TestCertificates.key, "--auth-timeout", "1", "--idle-timeout", "300"]
        )
        let trickle = try RawSocket(port: server.port, timeoutSeconds: 1)
        // The first bytes of a ClientHello, then one more every 0.3 s.
        try trickle.send(bytes: [0x16, 0x03, 0x01, 0x02, 0x00])
        let started = Date()
        var closed = false
        while !closed, Date().timeIntervalSince(started) < 8 {
            if (try? trickle.sendWithoutBlocking(bytes: [0x01])) == nil { closed = true; break }
            closed = (try? trickle.isClosedByServer()) == true
        }
        #expect(closed, "a TLS handshake trickled a byte at a time kept its connection for 8 s")
        #expect(Date().timeIntervalSince(started) >= 0.8, "closed before its deadline: not the deadline's doing")
    }

    @Test func theUnixSocketHasPlacesOfItsOwn() throws {
        let server = try RunningEntitled(unixSocket: true, arguments: ["--max-connections", "2"])
        let first = try RawSocket(port: server.port)
        let second = try RawSocket(port: server.port)
        let third = try RawSocket(port: server.port)
        #expect(try third.readLine()?.contains(#""code":"busy""#) == true, "a third TCP connection was not refused")
        let local = EntitledConnection(address: .unixSocket(path: try #require(server.socketPath)))
        try local.connect()
        #expect(try local.send(line: #"{"op":"ping"}"#).isOK, "the Unix socket was refused while the TCP places were taken")
        withExtendedLifetime((first, second)) {}
    }
}
