import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Issue 44's slow clients, at small scale, against a real `entitled-stores`: bodies trickled a byte at a time
/// (never silent for `--idle-timeout`) must neither hold a connection past `--request-timeout` nor keep a
/// genuine store delivery out while they fill `--max-connections`.
@Suite struct ReceiverSlowClientTests {
    /// A request declaring a 1 MiB body, of which it sends the first byte.
    static let slowStart = "POST /stripe HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\nStripe-Signature: t=1,v1=00\r\n\r\n{"

    @Test func aGenuineDeliveryIsAnsweredWhileSlowBodiesHoldEveryConnection() throws {
        let entitled = try RunningEntitled()
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)", environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret],
            arguments: ["--max-connections", "16"]
        )
        // Sixteen slow bodies take every connection, each sending a byte a second: never idle for 10 s.
        let slow = try (0..<16).map { _ in try RawConnection(port: stores.port) }
        for connection in slow { try connection.send(Self.slowStart) }
        for _ in 0..<2 {
            Thread.sleep(forTimeInterval: 0.8)
            for connection in slow { _ = try? connection.send("a") }
        }

        // A signed Stripe delivery must get its 200 while they go on trickling.
        let now = StripeFixtures.now
        let body = StripeFixtures.subscriptionEvent("evt_slow_1", type: "customer.subscription.created", created: now - 60, periodEnd: now + 30 * 86_400)
        var head = "POST /stripe HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in StripeFixtures.signed(body) { head += "\(name): \(value)\r\n" }
        let genuine = try RawConnection(port: stores.port)
        try genuine.send(head + "\r\n" + String(decoding: body, as: UTF8.self))
        var reply = ""
        let started = Date()
        while Date().timeIntervalSince(started) < 10, !reply.contains("\r\n\r\n") {
            reply += genuine.reply(within: 1)
            for connection in slow { _ = try? connection.send("a") }
        }
        try #require(reply.hasPrefix("HTTP/1.1 200"), "the genuine delivery got no 200 within 10 s while slow bodies held the connections: \(reply)")
        #expect(try EntitledConnection(address: .tcp(host: "127.0.0.1", port: entitled.port)).send(.memberships(user: "user_1")).memberships?.count == 1)

        // Room was made by closing a slow body, counted as such.
        let metrics = try stores.get("/metrics").body
        #expect(metrics.contains(#"entitled_stores_evicted_total{while="reading"}"#), "\(metrics)")
    }

    @Test func aClientThatTakesNoneOfItsAnswersIsClosedAtTheRequestDeadline() throws {
        // Requests pipelined whole and answers never read: the connection is always answering, where
        // neither the idle timeout nor an eviction may touch it, unless the receiver closes a connection whose
        // answers have not been taken for --request-timeout (nginx's send_timeout).
        let entitled = try RunningEntitled()
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)",
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_REQUEST_TIMEOUT": "2"],
            arguments: ["--idle-timeout", "30"]
        )
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var small: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(stores.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        // More answers than every buffer between the two holds (the kernel's on both sides, then the receiver's
        // own): requests go on being sent, as far as the receiver reads them, for 6 s.
        let requests = Array(String(repeating: "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", count: 1_000).utf8)
        var pending: [UInt8] = []
        let sending = Date()
        while Date().timeIntervalSince(sending) < 6 {
            // Whole requests only: what a send leaves is sent first next time.
            if pending.isEmpty { pending = requests }
            let sent = pending.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent > 0 { pending.removeFirst(sent) }
            if sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        // Then wait, still taking nothing, for the receiver to end the connection: its FIN or reset shows in
        // poll without a read. (Reading here, as this test once did, took answers and let a receiver held up
        // on a loaded machine go on writing: it then closed at the idle timeout instead.)
        let peerHungUp: Int16 = 0x2000  // POLLRDHUP: Linux's, which Glibc shows only to C code with _GNU_SOURCE
        var closed = false
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !closed {
            var poller = pollfd(fd: descriptor, events: peerHungUp, revents: 0)
            if poll(&poller, 1, 1_000) > 0 {
                closed = poller.revents & (peerHungUp | Int16(POLLHUP) | Int16(POLLERR)) != 0
            }
        }
        #expect(closed, "the receiver kept answering a client that took none of its answers")
        #expect(try stores.get("/metrics").body.contains("entitled_stores_timed_out_total 1"))
    }

    @Test func aTricklingRequestIsCutOffAtTheRequestDeadline() throws {
        let entitled = try RunningEntitled()
        // The deadline through the environment: a receiver that does not know it starts all the same (with a
        // warning), and then shows what it lets a trickler do.
        let stores = try RunningStores(
            entitled: "127.0.0.1:\(entitled.port)",
            environment: ["ENTITLED_STORES_STRIPE_SECRET": StripeFixtures.secret, "ENTITLED_STORES_REQUEST_TIMEOUT": "2"],
            arguments: ["--idle-timeout", "30"]
        )
        // One trickles its body, the other its header: a byte every 0.3 s, never silent for the idle timeout.
        let trickling = [try RawConnection(port: stores.port), try RawConnection(port: stores.port)]
        try trickling[0].send(Self.slowStart)
        try trickling[1].send("POST /stripe HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        var replies = ["", ""]
        var closed = [false, false]
        let started = Date()
        while Date().timeIntervalSince(started) < 15, closed.contains(false) {
            for index in trickling.indices where !closed[index] {
                if (try? trickling[index].send("a")) == nil { closed[index] = true }
                replies[index] += trickling[index].reply(within: 0.15)
                if replies[index].contains("\r\n\r\n") { closed[index] = trickling[index].isClosed(within: 2) }
            }
        }
        for (index, what) in ["body", "header"].enumerated() {
            #expect(replies[index].hasPrefix("HTTP/1.1 408"), "a trickled \(what) was not answered 408 within 15 s: \(replies[index])")
            #expect(replies[index].lowercased().contains("connection: close"), "\(replies[index])")
            #expect(closed[index], "the connection of a trickled \(what) is still open")
        }
        #expect(try stores.get("/metrics").body.contains("entitled_stores_timed_out_total 2"))
    }
}
