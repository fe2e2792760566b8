import EntitledTestSupport
import Foundation
import Testing

/// A million requests against a real `entitled` process: its memory must stay flat once warm.
@Suite struct SoakTests {
    /// Reads and refused requests only: they must cost nothing that lasts. (Writes grow the store, as
    /// they should; the memory benchmark measures that.)
    static let mix: [String] = [
        #"{"op":"check","user":"soak-user","product":"prod_soak"}"#,
        #"{"op":"check","user":"soak-nobody","entitlement":"soak"}"#,
        #"{"op":"check","device":"soak-device-\#(UUID().uuidString)"}"#,
        #"{"op":"memberships","user":"soak-user"}"#,
        #"{"op":"customer","user":"soak-user"}"#,
        #"{"op":"catalog","id":{"nested":[1,2,3]}}"#,
        #"{"op":"ping","id":"soak"}"#,
        #"{"op":"check","user":""}"#,
        #"{"op":"grant","user":"soak-user"}"#,
        #"{"op":"no-such-op"}"#,
        #"{"op":"check","user":"soak-user","#,
        #"{"op":"revoke","membership":"mem_0000000000000"}"#,
    ]

    @Test func serverMemoryStaysFlatOverAMillionRequests() async throws {
        let (warm, after) = try await onDedicatedThread(Self.soak)
        // Allocators keep some slack; a leak of even 8 bytes a request would be 6,400 KiB here.
        #expect(after - warm < 2_048, "resident memory grew from \(warm) KiB to \(after) KiB over 800,000 requests")
    }

    /// Resident memory (KiB) of a server warmed by 200,000 requests, and after 800,000 more.
    @Sendable static func soak() throws -> (warm: Int, after: Int) {
        let server = try RunningEntitled()
        defer { server.stop() }
        let socket = try RawSocket(port: server.port, timeoutSeconds: 30)
        for setup in [
            #"{"op":"define","entitlement":"soak","products":["prod_soak"]}"#,
            #"{"op":"grant","user":"soak-user","product":"prod_soak"}"#,
        ] {
            try socket.send(setup + "\n")
            let answer = try socket.readResponse()
            if !answer.isOK { throw TestSupportFailure(description: "setup failed: \(answer.line)") }
        }
        guard let pid = Self.processIdentifier(workingIn: server.directory.path) else {
            throw TestSupportFailure(description: "no process runs in \(server.directory.path)")
        }

        // Batches pipelined in one write: a million requests at test speed (RawSocket rather than the
        // client library, whose per-request promise would dominate the run).
        let batchSize = 2_000
        let batch = (0..<batchSize).map { Self.mix[$0 % Self.mix.count] + "\n" }.joined()
        func run(batches: Int) throws {
            for _ in 0..<batches {
                try socket.send(batch)
                for _ in 0..<batchSize {
                    guard let line = try socket.readLine() else { throw TestSupportFailure(description: "the server closed the connection") }
                    if !line.hasPrefix(#"{"ok":"#) { throw TestSupportFailure(description: "not an answer: \(line)") }
                }
            }
        }
        try run(batches: 100)  // 200,000 requests to warm up: buffers, allocator arenas, caches
        let warm = try Self.residentKilobytes(of: pid)
        try run(batches: 400)  // 800,000 more: 1,000,000 in all
        return (warm, try Self.residentKilobytes(of: pid))
    }

    /// The pid of the process whose working directory is `path` (each test server has its own).
    static func processIdentifier(workingIn path: String) -> Int32? {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                let cwd = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/cwd")
            else { continue }
            if cwd == resolved || cwd == path { return pid }
        }
        return nil
    }

    /// VmRSS of `pid`, in KiB.
    static func residentKilobytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { throw TestSupportFailure(description: "no VmRSS in /proc/\(pid)/status") }
        return value
    }
}
