import EntitledClient
import EntitledStores
import EntitledTestSupport
import Foundation
import Testing

/// The receiver's listener limits against a real `entitled-stores`: silent and trickling connections are
/// closed at the idle timeout, at `--max-connections` a new connection closes the one idle longest, and each
/// refusal's status names its real cause.
@Suite struct ReceiverLimitTests {
    static let whopSecret = "whsec_" + Data("whop-limits-secret-0123456789".utf8).base64EncodedString()

    @Test func silentAndTricklingConnectionsAreClosedAtTheIdleTimeout() throws {
        let entitled = try RunningEntitled()
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--idle-timeout", "1"])
        let silent = try RawConnection(port: stores.port)
        let trickling = try RawConnection(port: stores.port)
        try trickling.send("POST /stripe HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        let started = Date()
        var closed = (silent: false, trickling: false)
        // The trickler sends a byte every 0.3 s (never a complete header); both must be closed long before 10 s.
        while Date().timeIntervalSince(started) < 10, !(closed.silent && closed.trickling) {
            if !closed.trickling { closed.trickling = (try? trickling.send("a")) == nil || trickling.isClosed(within: 0.3) }
            if !closed.silent { closed.silent = silent.isClosed(within: 0) }
        }
        #expect(closed.silent, "a connection that sent nothing is still open after 10 s")
        #expect(closed.trickling, "a connection trickling its header is still open after 10 s")
        #expect(try stores.get("/health").status == 200)
    }

    @Test func atTheMaximumANewConnectionClosesTheOneIdleLongest() throws {
        let entitled = try RunningEntitled()
        let stores = try RunningStores(entitled: "127.0.0.1:\(entitled.port)", arguments: ["--max-connections", "3", "--idle-timeout", "60"])
        let held = try (0..<3).map { _ in try RawConnection(port: stores.port) }
        // Each of the three is accepted (a request on the first is answered in turn, and keeps it alive).
        try held[0].send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(held[0].reply(within: 5).hasPrefix("HTTP/1.1 200"))
        Thread.sleep(forTimeInterval: 1.2)  // every one has waited over a second: each may be closed to make room

        // A fourth is served, and one of the two that never sent a request (idle longest) made room for it.
        let newcomer = try RawConnection(port: stores.port)
        try newcomer.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(newcomer.reply(within: 5).hasPrefix("HTTP/1.1 200"), "a fourth connection was not served at --max-connections 3")
        let started = Date()
        var closed = [false, false, false]
        while Date().timeIntervalSince(started) < 5, !closed.contains(true) {
            closed = held.map { $0.isClosed(within: 0.1) }
        }
        #expect(closed == [false, true, false] || closed == [false, false, true], "closed to make room: \(closed)")
        #expect(try stores.get("/metrics").body.contains(#"entitled_stores_evicted_total{while="idle"} "#))
    }

    @Test func eachRefusalNamesItsRealCause() throws {
        let entitled = try RunningEntitled()
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)",
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_WHOP_SECRET": Self.whopSecret]
        )
        // A broken chunked body is malformed, not too large.
        let chunked = try RawConnection(port: stores.port)
        try chunked.send("POST /stripe HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        let chunkedReply = chunked.reply(within: 5)
        #expect(chunkedReply.hasPrefix("HTTP/1.1 400"), "\(chunkedReply)")
        #expect(!chunkedReply.contains("larger than"), "\(chunkedReply)")

        // Invalid UTF-8 in a correctly signed body is refused, not read with replacement characters.
        let event = String(decoding: StripeFixtures.subscriptionEvent("evt_1", created: StripeFixtures.now, periodEnd: StripeFixtures.now + 86_400), as: UTF8.self)
        var invalid = Array(event.replacingOccurrences(of: "user_1", with: "user_\u{FF}").utf8)
        invalid = invalid.map { $0 == 0xC3 ? 0xFF : $0 }  // no longer valid UTF-8
        let reply = try stores.post("/stripe", body: invalid, headers: StripeFixtures.signed(invalid))
        #expect(reply.status == 400 && reply.body.contains("UTF-8"), "\(reply.status) \(reply.body)")

        // Two webhook-signature fields: verified whichever holds the valid entry.
        let timestamp = Int64(Date().timeIntervalSince1970)
        let body = WhopNotificationTests.body("membership.went_valid", data: WhopNotificationTests.membership(periodEnd: "2099-01-01T00:00:00Z"), timestamp: "2026-01-01T00:00:00Z")
        let valid = StandardWebhookSignature.signature(id: "msg_1", timestamp: timestamp, body: body, secret: Self.whopSecret)
        let whop = try RawConnection(port: stores.port)
        try whop.send(
            "POST /whop HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.count)\r\nwebhook-id: msg_1\r\nwebhook-timestamp: \(timestamp)\r\n"
                + "webhook-signature: \(valid)\r\nwebhook-signature: v1,AAAA\r\n\r\n" + String(decoding: body, as: UTF8.self)
        )
        let whopReply = whop.reply(within: 10)
        #expect(whopReply.hasPrefix("HTTP/1.1 200"), "\(whopReply)")
    }
}

/// A raw loopback TCP connection, for requests no client would send.
final class RawConnection {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = try LoopbackSocket.connect(port: port)
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let count = bytes.withUnsafeBytes { Foundation.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard count == bytes.count else { throw RawConnectionFailure(description: "send: errno \(errno)") }
    }

    /// Whether the server closed the connection (end of stream or reset) within `seconds`.
    func isClosed(within seconds: Double) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) <= 0
    }

    /// What the server sent within `seconds` (until it closed or went quiet for that long).
    func reply(within seconds: Double) -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { break }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += chunk[..<count]
            if let text = String(validating: received, as: UTF8.self), text.contains("\r\n\r\n") {
                // Enough for the tests: the status line and whatever body came with it.
                if let length = text.firstMatch(of: /[Cc]ontent-[Ll]ength: (\d+)/)?.1, let expected = Int(length),
                    let headEnd = text.range(of: "\r\n\r\n"), text.utf8.count - text[..<headEnd.upperBound].utf8.count >= expected
                {
                    break
                }
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    deinit { close(descriptor) }
}

struct RawConnectionFailure: Error, CustomStringConvertible {
    let description: String
}
