import EntitledClient
import EntitledTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The issue's corpus of nasty inputs, sent over a real TCP connection to an in-process server: each gets
/// its error (or, for a line over the limit, the `too_large` answer and a clean close), never a crash;
/// the connection stays usable after a non-fatal error, and the server goes on serving new connections.
///
/// Raw sockets, not the client library: the point is bytes no client would send, in pieces it would not.
/// Serialized: the cases are many small servers, and started all at once they were a burst of threads
/// that delayed the timing-sensitive tests running beside them.
@Suite("Hostile input over a real socket gets an error or a clean close, never a crash", .serialized)
struct HostileInputTests {
    @Test(arguments: HostileInput.all)
    func aHostileLineGetsItsAnswerAndTheServerServesOn(_ input: HostileInput) async throws {
        try await withTestServer(maximumLineLength: HostileInput.longestLine) { server in
            let connection = try server.rawSocket()
            try connection.send(bytes: input.bytes)
            try Self.expectAnswers(to: input, on: connection)
            try await Self.expectServing(connection, server)
        }
    }

    /// The framing reassembles a line from any number of reads: a `\r`, a NUL or a multi-byte character
    /// at a packet's edge changes nothing.
    @Test(arguments: HostileInput.all.filter { $0.bytes.count <= 64 })
    func theSameAnswerComesWhenEveryByteIsItsOwnPacket(_ input: HostileInput) async throws {
        try await withTestServer(maximumLineLength: HostileInput.longestLine) { server in
            let connection = try server.rawSocket()
            for byte in input.bytes {
                try connection.send(bytes: [byte])
                try await Task.sleep(for: .milliseconds(1))  // TCP_NODELAY: each byte leaves as its own segment
            }
            try Self.expectAnswers(to: input, on: connection)
            try await Self.expectServing(connection, server)
        }
    }

    @Test func aTenMegabyteLineIsRefusedTooLargeAndClosedWithoutBeingReadToItsEnd() async throws {
        try await withTestServer { server in
            // The default limit, 64 KiB. No newline is ever sent: the server must not wait for one.
            let connection = try server.rawSocket()
            try connection.send(#"{"op":"ping","padding":""#)
            let sent = try await Self.sendUntilClosed(connection, atMost: 10 << 20)
            // Had the server read all 10 MB, every byte would have been taken. It stops reading after the
            // limit and a little more, and closes; the kernel buffers between the two hold far less than
            // 10 MB (Linux caps a socket's send buffer at 4 MiB by default, and the server's receive
            // buffer only grows as the server reads).
            #expect(sent < 10 << 20, "the client wrote all 10 MB: the server read the whole line")

            let answer = try #require(try connection.readLine(), "closed without the too_large answer")
            let response = try EntitledResponse(line: answer)
            #expect(response.errorCode == "too_large", "\(answer)")
            #expect(response["id"] == nil)
            #expect(try connection.isClosedByServer())

            let client = try await server.connect()
            #expect(try await client.send(line: #"{"op":"ping"}"#).isOK, "the server stopped serving")
            await client.close()
        }
    }

    // MARK: Helpers

    /// Reads the answers `input` expects, in order: each one valid response line, a success or an error
    /// with the expected code and a message, never an `id` with `bad_json`, and the echoed `id` as sent.
    private static func expectAnswers(to input: HostileInput, on connection: RawSocket) throws {
        for (index, expected) in input.answers.enumerated() {
            let line = try #require(try connection.readLine(), "closed instead of answer \(index + 1)")
            let response = try EntitledResponse(line: line)
            #expect(response.isOK == (expected == nil), "answer \(index + 1): \(line)")
            #expect(response.errorCode == expected, "answer \(index + 1): \(line)")
            if expected != nil {
                #expect(response.error?.message.isEmpty == false, "an error without a message: \(line)")
            }
            if expected == "bad_json" {
                #expect(response["id"] == nil, "a bad_json answer carries no id: \(line)")
            }
            if index == 0, let echo = input.echo {
                #expect(line.contains(echo), "the id is not echoed as sent (\(echo)): \(line)")
            }
        }
    }

    /// The connection that got an error still answers (only `too_large` closes one), and a new
    /// connection is served: the server is up.
    private static func expectServing(_ connection: RawSocket, _ server: RunningServer) async throws {
        try connection.send(#"{"op":"ping","id":"same connection"}"# + "\n")
        let same = try connection.readResponse()
        #expect(same.isOK && same["id"]?.stringValue == "same connection", "\(same.line)")

        let client = try await server.connect()
        #expect(try await client.send(line: #"{"op":"ping","id":"new connection"}"#).isOK)
        await client.close()
    }

    /// Writes bytes of a string's text until the server closes the connection (the write fails with
    /// EPIPE or ECONNRESET) or `limit` bytes were taken; returns how many were.
    ///
    /// Without blocking, so that a server that neither reads nor closes fails the test instead of
    /// hanging it: after 30 seconds without progress the test records that and stops.
    private static func sendUntilClosed(_ connection: RawSocket, atMost limit: Int) async throws -> Int {
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 << 10)
        var sent = 0
        var stalledSince: ContinuousClock.Instant?
        while sent < limit {
            let taken: Int
            do {
                taken = try connection.sendWithoutBlocking(bytes: Array(chunk.prefix(limit - sent)))
            } catch let failure as RawSocket.Failure where isClosedConnection(failure) {
                return sent
            }
            sent += taken
            guard taken == 0 else {
                stalledSince = nil
                continue
            }
            let since = stalledSince ?? .now
            stalledSince = since
            if ContinuousClock.now - since > .seconds(30) {
                Issue.record("the server neither read nor closed for 30 s after \(sent) bytes")
                return sent
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        return sent
    }

    /// Whether a failed write says the peer closed: RawSocket reports the errno only in its message.
    private static func isClosedConnection(_ failure: RawSocket.Failure) -> Bool {
        failure.description.hasSuffix("errno \(EPIPE)") || failure.description.hasSuffix("errno \(ECONNRESET)")
    }
}
