import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// The real `entitled` on a real full disk: a 2 MiB tmpfs filled by granting until the server refuses.
@Suite(
    "A real full disk",
    .serialized,
    // Mounting a size-limited tmpfs needs root (CAP_SYS_ADMIN); elsewhere the suite shows as skipped
    // with this reason, since no other way makes a real disk run full on demand.
    .enabled(if: TinyFileSystem.canMount, "cannot mount a size-limited tmpfs here (needs root): \(TinyFileSystem.mountRefusal ?? "")")
)
struct FullDiskProcessTests {
    static func grantLine(_ user: String) -> String {
        #"{"op":"grant","user":"\#(user)","product":"prod_pro"}"#
    }

    static func isActive(_ user: String, on connection: EntitledAsyncConnection) async throws -> Bool {
        let answer = try await connection.send(line: #"{"op":"check","user":"\#(user)","product":"prod_pro"}"#)
        #expect(answer.isOK, "\(answer.line)")
        return answer["active"]?.boolValue == true
    }

    static func persistence(on connection: EntitledAsyncConnection) async throws -> JSONValue {
        let stats = try await connection.send(line: #"{"op":"stats"}"#)
        return try #require(stats["persistence"], "\(stats.line)")
    }

    @Test func aFullDiskRefusesWritesWithoutATraceAndTheyResumeByThemselvesOnceSpaceIsFreed() async throws {
        let directory = try TemporaryDirectory()
        let disk = try TinyFileSystem(at: directory.path + "/small", kilobytes: 2048)
        let mountPoint = disk.path
        let running = ServerKilledAtEnd()
        defer {
            running.kill()  // before the unmount: the server holds files there
            disk.unmount()
        }
        // Space to free later: most of the disk, taken before the server starts.
        let filler = mountPoint + "/filler"
        #expect(FileManager.default.createFile(atPath: filler, contents: Data(count: 1_536 << 10)))
        let data = mountPoint + "/data"
        var (server, port) = try DurabilityProcessTests.start(data, in: directory, extra: ["--metrics-port", "0"])
        running.server = server
        var connection = try await EntitledAsyncConnection.local(port: port)
        let afterHost = try #require(server.readyLine.range(of: "metrics http://127.0.0.1:")).upperBound
        let metricsPort = try #require(Int(server.readyLine[afterHost...].prefix { $0.isNumber }))
        func metrics() async throws -> [String: Double] {
            MetricsScrape.samples(try await MetricsScrape.get("/metrics", port: metricsPort).body)
        }
        #expect(try await metrics()["entitled_log_writable"] == 1)

        // Grant until the disk is full.
        var acknowledged: [String] = []
        var refusal: EntitledResponse?
        for index in 0..<100_000 {
            let user = "user-\(index)"
            let answer = try await connection.send(line: Self.grantLine(user))
            guard answer.isOK else {
                refusal = answer
                break
            }
            acknowledged.append(user)
        }
        let refused = try #require(refusal, "the 2 MiB disk never ran full")
        let refusedUser = "user-\(acknowledged.count)"
        #expect(refused.error?.code == .unavailable, "\(refused.line)")
        #expect(refused.error?.message.contains("ENOSPC") == true, "\(refused.line)")
        #expect(refused.error?.message.contains("resume by themselves") == true, "\(refused.line)")
        #expect(acknowledged.count > 100)

        // The refused grant is nowhere to be seen, and the state is in `stats`.
        #expect(try await !Self.isActive(refusedUser, on: connection))
        #expect(try await Self.isActive(acknowledged.last!, on: connection))
        var persistence = try await Self.persistence(on: connection)
        #expect(persistence["writable"]?.boolValue == false)
        #expect(persistence["unwritable"]?["kind"]?.stringValue == "disk_full")
        #expect(persistence["unwritable"]?["resumesByItself"]?.boolValue == true)
        #expect(persistence["unwritable"]?["since"]?.stringValue != nil)
        let meanwhile = try await connection.send(line: Self.grantLine("meanwhile"))
        #expect(meanwhile.error?.code == .unavailable, "\(meanwhile.line)")
        let outage = try await metrics()
        #expect(outage["entitled_log_writable"] == 0)
        #expect(outage["entitled_log_needs_restart"] == 0)
        #expect((outage["entitled_log_unwritable_since_timestamp_seconds"] ?? 0) > 1_700_000_000)
        #expect(outage["entitled_errors_total{code=\"unavailable\"}"] == 2)

        // Free the space: writes resume by themselves. The client retries its refused grant until it is taken.
        try FileManager.default.removeItem(atPath: filler)
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            let retry = try await connection.send(line: Self.grantLine(refusedUser))
            if retry.isOK { break }
            #expect(retry.error?.code == .unavailable, "\(retry.line)")
            try #require(ContinuousClock.now < deadline, "writes did not resume once the disk had space again")
            try await Task.sleep(for: .milliseconds(50))
        }
        acknowledged.append(refusedUser)
        persistence = try await Self.persistence(on: connection)
        #expect(persistence["writable"]?.boolValue == true)
        #expect(persistence["unwritable"] == nil)
        #expect((persistence["logOutages"]?.intValue ?? 0) >= 1)
        let resumed = try await metrics()
        #expect(resumed["entitled_log_writable"] == 1)
        #expect(resumed["entitled_log_unwritable_since_timestamp_seconds"] == 0)
        #expect((resumed["entitled_log_outages_total"] ?? 0) >= 1)

        // More writes, a snapshot among them, then a crash.
        for index in 0..<20 {
            if index == 10 { #expect(try await connection.send(line: #"{"op":"snapshot"}"#).isOK) }
            let user = "after-\(index)"
            #expect(try await connection.send(line: Self.grantLine(user)).isOK)
            acknowledged.append(user)
        }
        _ = server.stop(with: SIGKILL)
        let log = server.standardErrorText()
        #expect(log.contains("the log cannot be written") && log.contains("the log takes writes again"), "\(log)")

        // Exactly the acknowledged grants, each once.
        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        running.server = server
        connection = try await EntitledAsyncConnection.local(port: port)
        for user in acknowledged {
            let answer = try await connection.send(line: #"{"op":"memberships","user":"\#(user)"}"#)
            #expect(answer.memberships?.count == 1, "\(user): \(answer.line)")
        }
        #expect(try await !Self.isActive("meanwhile", on: connection))
        let store = try await connection.send(line: #"{"op":"stats"}"#)
        #expect(store["store"]?["memberships"]?.intValue == acknowledged.count, "\(store.line)")
        _ = server.stop(with: SIGKILL)
    }
}

/// The server of a test, killed at the end whatever happened.
private final class ServerKilledAtEnd: @unchecked Sendable {
    var server: ServerProcess?

    func kill() {
        guard let server, server.process.isRunning else { return }
        _ = server.stop(with: SIGKILL)
    }
}
