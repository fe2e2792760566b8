import EntitledClient
import Foundation
import Testing

@Suite("Backpressure on clients that do not read their responses")
struct BackpressureTests {
    @Test func theServerStopsReadingFromAClientThatDoesNotReadItsResponses() async throws {
        try await withTestServer { server in
            // Raw: the test needs a shrunk receive buffer, answers left unread and writes that never block.
            let client = try server.rawSocket(receiveBufferSize: 4096)
            let batch = Array(String(repeating: #"{"op":"ping"}"# + "\n", count: 256).utf8)
            // Pipeline pings and never read an answer. A server without backpressure reads on, keeping every
            // answer in memory, so the client could send until the test's 60-second limit. A server with it
            // stops reading once its unsent answers pass the write buffer's high water mark, and the client's
            // sends stall when the kernel buffers between the two are full.
            var sent = 0
            var unsent = batch[...]  // what the kernel has not taken yet, so the stream stays whole lines
            var stalledRounds = 0
            // Filling the kernel's autotuned buffers (megabytes) takes a debug server a few seconds, many
            // more on a machine busy with the rest of the suite, where a connection's turn ends after 1 ms of
            // work and this task may wait long for a thread (150 s were once not enough there). So the loop
            // ends on what decides the test, 10 stalled rounds or 64 MiB taken, and the time limit only
            // bounds a run that makes no progress either way.
            let deadline = ContinuousClock.now + .seconds(600)
            while stalledRounds < 10, sent < 64 << 20, ContinuousClock.now < deadline {
                if unsent.isEmpty { unsent = batch[...] }
                let taken = try client.sendWithoutBlocking(bytes: Array(unsent))
                sent += taken
                unsent = unsent.dropFirst(taken)
                if taken == 0 {
                    stalledRounds += 1
                    try await Task.sleep(for: .milliseconds(50))
                } else {
                    stalledRounds = 0
                }
            }
            #expect(stalledRounds == 10, "the server kept reading from a client that reads nothing: \(sent) bytes")
            #expect(sent < 64 << 20, "the server read \(sent) bytes from a client that reads nothing")

            // Still stalled a moment later: the server is not slowly draining the client either.
            try await Task.sleep(for: .milliseconds(300))
            #expect(try client.sendWithoutBlocking(bytes: Array(unsent.isEmpty ? batch[...] : unsent)) == 0)

            // Other clients are served meanwhile.
            #expect(try await server.connect().send(line: #"{"op":"ping","id":"other"}"#).isOK)

            // Once the client reads, the server reads again: every ping sent so far is answered.
            let expectedResponses = sent / (batch.count / 256)
            for index in 0..<expectedResponses {
                guard try client.readLine() != nil else {
                    Issue.record("the connection closed after \(index) of \(expectedResponses) responses")
                    return
                }
            }
        }
    }
}
