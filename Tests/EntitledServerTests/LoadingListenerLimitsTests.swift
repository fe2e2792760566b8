import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import Logging
import NIOCore
import Testing

/// The limits the `LoadingListener` keeps while a server starts, in process so that loading lasts as long
/// as a test needs: an idle connection is closed after the idle timeout, and one that sends requests
/// without reading their answers is closed once they pile up, while other connections are still answered.
@Suite struct LoadingListenerLimitsTests {
    /// A listener on a free loopback port, loading 3 of 10 memberships until `finish()`.
    private static func startListener(idleTimeoutSeconds: Double = 0) throws -> (LoadingListener, port: Int) {
        var configuration = ServerConfiguration(tcp: .init(host: "127.0.0.1", port: 0))
        configuration.idleTimeoutSeconds = idleTimeoutSeconds
        let progress = LoadingProgress()
        progress.expect(10)
        progress.advance(by: 3)
        let listener = try LoadingListener.start(configuration: configuration, progress: progress, logger: Logger(label: "test"))
        let port = try #require(listener.addresses.first?.port)
        return (listener, port)
    }

    @Test func aConnectionIdleForTheIdleTimeoutIsClosed() throws {
        let (listener, port) = try Self.startListener(idleTimeoutSeconds: 0.5)
        defer { listener.finish().release() }
        let idle = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(idle) }
        let answer = try LoopbackSocket.call(idle, #"{"op":"ping"}"#)
        #expect(answer.contains(#""code":"loading""#), "\(answer)")
        #expect(answer.contains(#""loaded":3"#) && answer.contains(#""total":10"#), "\(answer)")

        let quiet = ContinuousClock.now
        var byte: UInt8 = 0
        // 0: closed by the listener. A listener without the timeout leaves the read to give up after 30 s (-1).
        #expect(recv(idle, &byte, 1, 0) == 0)
        #expect(ContinuousClock.now - quiet >= .milliseconds(450), "closed before it was idle for the timeout")
    }

    @Test func aConnectionThatDoesNotReadItsAnswersIsClosedAndOthersAreStillAnswered() throws {
        let (listener, port) = try Self.startListener()
        defer { listener.finish().release() }
        // A small receive buffer, so that the answers pile up in the listener rather than in the kernel.
        let greedy = try RawSocket(port: port, receiveBufferSize: 4096)

        // Pings, 14 bytes each, whose answers (over 100 bytes each) are never read: the listener must give
        // up on the connection long before 64 MiB of requests were sent. Sent without blocking, so that a
        // listener that stops reading fails the test at the deadline instead of hanging it.
        let batch = Array(String(repeating: #"{"op":"ping"}"# + "\n", count: 1000).utf8)
        let deadline = ContinuousClock.now + .seconds(60)
        var sent = 0
        var closed = false
        while sent < 64 << 20, ContinuousClock.now < deadline {
            do {
                let taken = try greedy.sendWithoutBlocking(bytes: batch)
                if taken == 0 { usleep(1_000) }
                sent += taken
            } catch {
                closed = errno == EPIPE || errno == ECONNRESET
                break
            }
        }
        #expect(closed, "still open after \(sent) bytes of requests whose answers were not read (errno \(errno))")

        let other = try LoopbackSocket.connect(port: port, receiveTimeoutSeconds: 30)
        defer { close(other) }
        #expect(try LoopbackSocket.call(other, #"{"op":"stats","id":7}"#).contains(#""code":"loading""#))
    }
}
