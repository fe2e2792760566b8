import EntitledClient
import EntitledServer
import EntitledTestSupport
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Bounded load on loopback: many connections, slow clients, clients that vanish. These prove the server
/// keeps serving; how fast it serves meanwhile is measured by `entitled-bench`, not asserted here.
@Suite(.serialized) struct LoadTests {
    @Test func fiveThousandOpenConnectionsAreHeldWhileAnotherConnectionKeepsChecking() async throws {
        // Client and server ends both live in this process: 10,000 descriptors, and room for the suites
        // that run meanwhile.
        try Self.raiseDescriptorLimit(to: 16_000)
        try await withTestServer(configure: { $0.maximumConnections = 6_000 }) { server in
            let setup = try await server.connect()
            try await setup.send(line: #"{"op":"grant","user":"u1","product":"p"}"#).requireOK()
            await setup.close()
            try await ConnectionLimitsTests.waitUntil { server.server.connectionCount == 0 }
            let port = server.port
            let held = Handoff<[RawSocket]>([])
            try await onDedicatedThread {
                held.value.reserveCapacity(5_000)
                for _ in 0..<5_000 { held.value.append(try RawSocket(port: port)) }
            }
            try await ConnectionLimitsTests.waitUntil { server.server.connectionCount == 5_000 }

            let checker = try await server.connect()
            for _ in 0..<2_000 {
                #expect(try await checker.send(line: #"{"op":"check","user":"u1","product":"p"}"#).active == true)
            }
            // Every one of the 5,000 is still served, not just held.
            let answered = try await onDedicatedThread { () -> Int in
                var answered = 0
                for (index, socket) in held.value.enumerated() where index % 50 == 0 {
                    try socket.send(#"{"op":"ping","id":\#(index)}"# + "\n")
                    if try socket.readLine() == #"{"ok":true,"id":\#(index)}"# { answered += 1 }
                }
                held.value.removeAll()
                return answered
            }
            #expect(answered == 100)
            try await ConnectionLimitsTests.waitUntil { server.server.connectionCount == 1 }
        }
    }

    @Test func clientsSendingOneByteAtATimeDoNotHoldUpTheOthers() async throws {
        try await withTestServer(eventLoops: 1) { server in
            let slow = try (0..<20).map { _ in try server.rawSocket() }
            let request = Array((#"{"op":"check","user":"slow"}"# + "\n").utf8)
            let checker = try await server.connect()
            // One byte from each slow client, then a check by the fast one, until the slow lines are whole:
            // the fast client is answered between every trickle of bytes, on the one event loop.
            for byte in request {
                for socket in slow { try socket.send(bytes: [byte]) }
                #expect(try await checker.send(line: #"{"op":"ping"}"#).isOK)
                try await Task.sleep(for: .milliseconds(2))
            }
            for socket in slow {
                #expect(try socket.readResponse().active == false)
            }
        }
    }

    @Test func clientsThatDisconnectMidRequestLeaveNoTrace() async throws {
        try await withTestServer { server in
            let before = server.server.connectionCount
            for round in 0..<300 {
                let socket = try server.rawSocket()
                try socket.send(#"{"op":"grant","user":"vanished-\#(round)","product":"p""#)  // never finished
                if round.isMultiple(of: 2) { socket.reset() } else { socket.closeSending() }
            }
            try await ConnectionLimitsTests.waitUntil { server.server.connectionCount == before }
            // Nothing of the half requests was carried out, and the server serves as before.
            let connection = try await server.connect()
            let memberships = try await connection.send(line: #"{"op":"memberships","user":"vanished-0"}"#)
            #expect(memberships["memberships"]?.arrayValue?.isEmpty == true)
            #expect(try await connection.send(line: #"{"op":"ping"}"#).isOK)
        }
    }

    /// Raises this process's soft limit on open files to `wanted` (within the hard limit).
    static func raiseDescriptorLimit(to wanted: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        try #require(limit.rlim_cur >= rlim_t(wanted), "the hard limit on open files (\(limit.rlim_max)) is below \(wanted)")
    }
}

extension EntitledResponse {
    /// Fails the test unless the answer is a success.
    @discardableResult
    func requireOK(sourceLocation: SourceLocation = #_sourceLocation) throws -> EntitledResponse {
        try #require(isOK, "\(line)", sourceLocation: sourceLocation)
        return self
    }
}
