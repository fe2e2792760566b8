import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

/// The loops' two ways of moving bytes, io_uring batches (the default where the kernel allows a ring) and
/// one system call per connection (`usesIoUring` off, or a kernel that refuses): each must answer every
/// line, in order, whatever the size of a line or of a batch, and survive a client that vanishes.
@Suite("Sending and receiving through io_uring and without it")
struct SystemCallBatchingTests {
    @Test(arguments: [true, false])
    func manyConnectionsPipeliningGetEveryAnswerInOrder(usesIoUring: Bool) async throws {
        try await withTestServer(configure: { $0.usesIoUring = usesIoUring }) { server in
            let setup = try await server.connect()
            try await setup.send(line: #"{"op":"grant","user":"u1","product":"pro"}"#).requireOK()
            let port = server.port
            let mismatches = try await onDedicatedThread { () -> [String] in
                let sockets = try (0..<40).map { _ in try RawSocket(port: port) }
                // 300 lines each, sent in one write per socket: the server reads them in many turns.
                for (index, socket) in sockets.enumerated() {
                    let lines = (0..<300).map { #"{"op":"check","user":"u\#((index + $0) % 2 + 1)","product":"pro","id":\#($0)}"# + "\n" }
                    try socket.send(lines.joined())
                }
                var mismatches: [String] = []
                for (index, socket) in sockets.enumerated() {
                    for number in 0..<300 {
                        let line = try socket.readLine() ?? "closed"
                        let active = (index + number) % 2 == 0
                        if !line.hasPrefix(#"{"ok":true,"id":\#(number),"active":\#(active)"#) { mismatches.append("socket \(index) line \(number): \(line)") }
                    }
                }
                return mismatches
            }
            #expect(mismatches.isEmpty, "\(mismatches.count) wrong, the first: \(mismatches.prefix(3))")
        }
    }

    @Test(arguments: [true, false])
    func aLineLongerThanOneReceiveIsAnsweredWhole(usesIoUring: Bool) async throws {
        try await withTestServer(configure: { $0.usesIoUring = usesIoUring }) { server in
            // 9,000 bytes of whitespace inside the object: more than a ring receive holds (4 KiB), less than
            // the line limit.
            let padding = String(repeating: " ", count: 9_000)
            let port = server.port
            let answers = try await onDedicatedThread { () -> [String] in
                let socket = try RawSocket(port: port)
                try socket.send(#"{"op":"grant",\#(padding)"user":"long","product":"pro","id":1}"# + "\n" + #"{"op":"ping","id":2}"# + "\n")
                return [try socket.readLine() ?? "closed", try socket.readLine() ?? "closed"]
            }
            #expect(answers[0].hasPrefix(#"{"ok":true"#) && answers[0].contains(#""id":1"#), "\(answers[0].prefix(200))")
            #expect(answers[1] == #"{"ok":true,"id":2}"#)
            #expect(server.store.memberships(visibleTo: .user("long")).count == 1)
        }
    }

    @Test(arguments: [true, false])
    func anAnswerLargerThanTheSocketBufferIsSentWhole(usesIoUring: Bool) async throws {
        try await withTestServer(configure: { $0.usesIoUring = usesIoUring }) { server in
            let setup = try await server.connect()
            for index in 0..<400 { try await setup.send(line: #"{"op":"grant","user":"big","product":"prod_\#(index)"}"#).requireOK() }
            let port = server.port
            let line = try await onDedicatedThread { () -> String in
                // A small receive buffer, read late: the server's send stops part-way and must go on later.
                let socket = try RawSocket(port: port, receiveBufferSize: 4096)
                try socket.send(#"{"op":"memberships","user":"big","limit":1000}"# + "\n")
                usleep(200_000)
                return try socket.readLine() ?? "closed"
            }
            let answer = try EntitledResponse(line: line)
            #expect(answer.memberships?.count == 400, "\(line.prefix(120))")
        }
    }

    @Test(arguments: [true, false])
    func aClientThatResetsItsConnectionLeavesTheOthersServed(usesIoUring: Bool) async throws {
        try await withTestServer(configure: { $0.usesIoUring = usesIoUring }) { server in
            let port = server.port
            let answer = try await onDedicatedThread { () -> String in
                for _ in 0..<20 {
                    let vanishing = try RawSocket(port: port)
                    try vanishing.send(String(repeating: #"{"op":"ping"}"# + "\n", count: 50))
                    vanishing.reset()
                }
                let survivor = try RawSocket(port: port)
                try survivor.send(#"{"op":"ping","id":7}"# + "\n")
                return try survivor.readLine() ?? "closed"
            }
            #expect(answer == #"{"ok":true,"id":7}"#)
        }
    }

    @Test func theServerSaysAtStartWhetherItUsesIoUringAndNoIoUringTurnsItOff() throws {
        let directory = try TemporaryDirectory()
        let ringed = ServerProcess(arguments: ["--port", "0", "--data-dir", directory.path + "/a", "--log-level", "debug"], workingDirectory: directory.path)
        _ = try ringed.startAndWaitUntilReady()
        // This machine's kernel allows a ring; one that refuses says which way it went instead.
        #expect(ringed.waitForStandardError(containing: "receiving and sending through io_uring"), "\(ringed.standardErrorText())")
        #expect(ringed.stop() == 0)

        let plain = ServerProcess(
            arguments: ["--port", "0", "--data-dir", directory.path + "/b", "--log-level", "debug", "--no-io-uring"], workingDirectory: directory.path
        )
        let port = try #require(try plain.startAndWaitUntilReady())
        #expect(plain.waitForStandardError(containing: "ioUring=off"), "\(plain.standardErrorText())")
        let socket = try RawSocket(port: port)
        try socket.send(#"{"op":"ping","id":1}"# + "\n")
        #expect(try socket.readLine() == #"{"ok":true,"id":1}"#)
        #expect(plain.stop() == 0)
        #expect(!plain.standardErrorText().contains("through io_uring"))
    }
}
