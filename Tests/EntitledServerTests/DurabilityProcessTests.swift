import EntitledTestSupport
import Foundation
import Testing

/// Durability of the real `entitled` process: restarts, kill -9, damaged files.
@Suite("Durability of the real server process", .serialized)
struct DurabilityProcessTests {
    /// Starts `entitled` on `dataDirectory` and a free port.
    static func start(_ dataDirectory: String, in directory: TemporaryDirectory, extra: [String] = []) throws -> (ServerProcess, Int) {
        let server = ServerProcess(
            arguments: ["--port", "0", "--data-dir", dataDirectory, "--snapshot-interval", "0"] + extra,
            workingDirectory: directory.path
        )
        let port = try #require(try server.startAndWaitUntilReady())
        return (server, port)
    }

    static let users = (0..<6).map { "user-\($0)" }
    static let devices = (0..<6).map { "device-\($0)" }

    @Test func aGracefulStopAndStartGiveTheSameStateForRandomOperations() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var random = SeededGenerator(state: 314)
        var (server, port) = try Self.start(data, in: directory)
        var connection = try LineConnection(port: port)
        var ids: [String] = []
        for step in 0..<300 {
            let user = Self.users.randomElement(using: &random)!
            let device = Self.devices.randomElement(using: &random)!
            let line: String
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:
                let subject = [#""user":"\#(user)""#, #""device":"\#(device)""#, #""user":"\#(user)","device":"\#(device)""#]
                    .randomElement(using: &random)!
                let expiry = [#","duration":"30d""#, "", #","expiresAt":"2020-01-01T00:00:00Z""#].randomElement(using: &random)!
                line = #"{"op":"grant",\#(subject),"product":"prod_\#(step % 7)","plan":"plan_\#(step % 3)","source":"stripe"\#(expiry)}"#
            case 4, 5:
                line = #"{"op":"claim","device":"\#(device)","user":"\#(user)"}"#
            case 6 where !ids.isEmpty:
                line = #"{"op":"revoke","membership":"\#(ids.randomElement(using: &random)!)","reason":"refund"}"#
            case 7 where !ids.isEmpty:
                // Lifecycle events, some redelivered (ids repeat) and some out of order (times go back).
                let type = [
                    #""type":"renewal","expiresAt":"2031-01-01T00:00:00Z""#, #""type":"cancellation""#,
                    #""type":"billing_issue","gracePeriodExpiresAt":"2030-06-01T00:00:00Z""#, #""type":"pause""#,
                    #""type":"resume""#, #""type":"product_change","product":"prod_9""#, #""type":"refund""#,
                ].randomElement(using: &random)!
                let day = 10 + Int.random(in: 0..<20, using: &random)
                line = #"{"op":"event","membership":"\#(ids.randomElement(using: &random)!)",\#(type),"eventId":"evt_\#(step % 40)","eventTime":"2025-01-\#(day)T00:00:00Z","reason":"webhook"}"#
            case 8:
                line = #"{"op":"define","entitlement":"ent_\#(step % 4)","products":["prod_\#(step % 7)","prod_\#((step + 3) % 7)"]}"#
            default:
                line = #"{"op":"snapshot"}"#  // snapshots in the middle: the state then comes from snapshot + log
            }
            let response = try connection.request(line)
            #expect(response.ok == true, "\(line) -> \(response)")
            if let id = response.membershipID { ids.append(id) }
        }
        let before = try StateDump(of: connection, users: Self.users, devices: Self.devices)
        #expect(server.stop() == 0)

        (server, port) = try Self.start(data, in: directory)
        connection = try LineConnection(port: port)
        let after = try StateDump(of: connection, users: Self.users, devices: Self.devices)
        #expect(before == after)
        #expect(server.stop() == 0)
    }

    @Test func killNineAfterLifecycleChangesKeepsEveryAcknowledgedEventKeyAndAuditEntry() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try Self.start(data, in: directory)
        var connection = try LineConnection(port: port)
        let grant = try connection.request(
            #"{"op":"grant","device":"device-0","product":"prod_pro","duration":"30d","willRenew":true,"periodType":"trial","transactionId":"tx_1","idempotencyKey":"order-1","reason":"import"}"#)
        let id = try #require(grant.membershipID)
        for line in [
            #"{"op":"claim","device":"device-0","user":"user-0","reason":"login"}"#,
            #"{"op":"event","membership":"\#(id)","type":"renewal","eventId":"e1","eventTime":"2025-01-01T00:00:00Z","expiresAt":"2031-01-01T00:00:00Z","transactionId":"tx_2"}"#,
            #"{"op":"snapshot"}"#,
            #"{"op":"event","membership":"\#(id)","type":"billing_issue","eventId":"e2","eventTime":"2025-02-01T00:00:00Z","gracePeriodExpiresAt":"2031-02-01T00:00:00Z"}"#,
        ] {
            #expect(try connection.request(line).ok == true, "\(line)")
        }
        let before = try StateDump(of: connection, users: Self.users, devices: Self.devices)
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()

        (server, port) = try Self.start(data, in: directory)
        connection = try LineConnection(port: port)
        #expect(try StateDump(of: connection, users: Self.users, devices: Self.devices) == before)
        let duplicate = try connection.request(#"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"e2","eventTime":"2025-03-01T00:00:00Z"}"#)
        #expect(duplicate["reason"] as? String == "duplicate")
        let retried = try connection.request(
            #"{"op":"grant","device":"device-0","product":"prod_pro","duration":"30d","idempotencyKey":"order-1"}"#)
        #expect(retried.membershipID == id)
        #expect(retried["idempotentReplay"] as? Bool == true)
        #expect(server.stop() == 0)
    }

    @Test func killNineDuringAStormOfWritesLosesNothingAcknowledgedAndAppliesNothingTwice() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let ledger = AcknowledgedLedger()
        for round in 0..<6 {
            let (server, port) = try Self.start(data, in: directory)
            // Everything acknowledged in earlier rounds survived the kill -9 before this start.
            try ledger.verify(against: LineConnection(port: port), users: Self.users, devices: Self.devices)

            let clients = (0..<4).map { StormClient(client: round * 10 + $0, port: port, ledger: ledger) }
            let finished = DispatchGroup()
            for client in clients {
                finished.enter()
                Thread.detachNewThread {
                    client.run()
                    finished.leave()
                }
            }
            try await Task.sleep(for: .milliseconds(150 + 60 * round))
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
            #expect(finished.wait(timeout: .now() + 30) == .success, "clients did not notice the kill")
        }
        let (server, port) = try Self.start(data, in: directory)
        try ledger.verify(against: LineConnection(port: port), users: Self.users, devices: Self.devices)
        #expect(ledger.acknowledgedGrants > 50, "the storm acknowledged too little to prove anything: \(ledger.acknowledgedGrants)")
        #expect(server.stop() == 0)
    }

    @Test func cuttingTheLogAtEveryByteOfItsLastRecordStartsWithExactlyTheRecordsBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        let original = directory.path + "/original"
        let (server, port) = try Self.start(original, in: directory)
        let connection = try LineConnection(port: port)
        #expect(try connection.request(#"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#).ok == true)
        #expect(try connection.request(#"{"op":"grant","user":"first","product":"prod_pro"}"#).ok == true)
        #expect(try connection.request(#"{"op":"grant","user":"last","product":"prod_pro","duration":"30d"}"#).ok == true)
        _ = server.stop(with: SIGKILL)  // no final snapshot: everything is in the log

        let segment = try #require(try DataDirectoryFiles.segments(in: original).last)
        let segmentPath = original + "/" + segment
        let records = try DataDirectoryFiles.records(of: segmentPath)
        let lastRecord = try #require(records.offsets.last)
        #expect(records.end - lastRecord > 40)

        // (Up to where the records end: after a kill -9 the file also holds the zeros the log prepared.)
        for cut in lastRecord..<records.end {
            let copy = directory.path + "/cut"
            try DataDirectoryFiles.copyDirectory(original, to: copy)
            try DataDirectoryFiles.truncate(copy + "/" + segment, to: cut)
            let (restarted, restartedPort) = try Self.start(copy, in: directory)
            let check = try LineConnection(port: restartedPort)
            #expect(try check.request(#"{"op":"check","user":"first","entitlement":"pro"}"#).active == true, "cut at \(cut)")
            #expect(try check.request(#"{"op":"check","user":"last"}"#).active == false, "cut at \(cut)")
            _ = restarted.stop(with: SIGKILL)
            if cut > lastRecord {
                let log = restarted.standardErrorText()
                #expect(log.contains("dropped a torn last log record") && log.contains(segment) && log.contains("offset=\(lastRecord)"), "cut at \(cut): \(log)")
            }
        }
    }

    @Test func aFlippedByteInTheMiddleOfTheLogStopsTheStartNamingTheFileAndOffset() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (server, port) = try Self.start(data, in: directory)
        let connection = try LineConnection(port: port)
        for index in 0..<5 {
            #expect(try connection.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).ok == true)
        }
        _ = server.stop(with: SIGKILL)
        let segment = try #require(try DataDirectoryFiles.segments(in: data).last)
        let offsets = try DataDirectoryFiles.recordOffsets(of: data + "/" + segment)
        let payloadOfThirdRecord = offsets[2] + 12
        try DataDirectoryFiles.flipByte(in: data + "/" + segment, at: payloadOfThirdRecord + 5)

        let refused = ServerProcess(arguments: ["--port", "0", "--data-dir", data], workingDirectory: directory.path)
        #expect(try refused.runToExit() != 0)
        let message = refused.standardErrorText()
        #expect(message.contains(segment) && message.contains("corrupt at byte offset \(payloadOfThirdRecord)"), "\(message)")
        // Nothing was changed: the damaged file is still there, whole.
        #expect(try DataDirectoryFiles.recordOffsets(of: data + "/" + segment).count == 5)
    }

    @Test func aFlippedByteInASnapshotStopsTheStartNamingTheFileAndOffset() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (server, port) = try Self.start(data, in: directory)
        let connection = try LineConnection(port: port)
        #expect(try connection.request(#"{"op":"grant","user":"u1","product":"prod_pro"}"#).ok == true)
        #expect(server.stop() == 0)  // graceful: writes the final snapshot
        let snapshot = try #require(try DataDirectoryFiles.snapshots(in: data).last)
        try DataDirectoryFiles.flipByte(in: data + "/" + snapshot, at: 60)

        let refused = ServerProcess(arguments: ["--port", "0", "--data-dir", data], workingDirectory: directory.path)
        #expect(try refused.runToExit() != 0)
        let message = refused.standardErrorText()
        #expect(message.contains(snapshot) && message.contains("corrupt at byte offset 40"), "\(message)")
    }

    @Test(arguments: ["everysec", "no"])
    func everyFsyncPolicySurvivesAProcessCrashWithEveryAcknowledgedWrite(policy: String) async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try Self.start(data, in: directory, extra: ["--fsync", policy])
        var connection = try LineConnection(port: port)
        for index in 0..<25 {
            #expect(try connection.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).ok == true)
        }
        _ = server.stop(with: SIGKILL)  // the answered writes were handed to the OS, which outlives the process
        (server, port) = try Self.start(data, in: directory, extra: ["--fsync", policy])
        connection = try LineConnection(port: port)
        for index in 0..<25 {
            #expect(try connection.request(#"{"op":"check","user":"u\#(index)"}"#).active == true)
        }
        #expect(server.stop() == 0)
    }

    @Test func snapshotsAreWrittenEverySnapshotIntervalWhenSomethingChanged() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let server = ServerProcess(
            arguments: ["--port", "0", "--data-dir", data, "--snapshot-interval", "1"],
            workingDirectory: directory.path
        )
        let port = try #require(try server.startAndWaitUntilReady())
        let connection = try LineConnection(port: port)
        #expect(try connection.request(#"{"op":"grant","user":"u1","product":"prod_pro"}"#).ok == true)
        let deadline = ContinuousClock.now + .seconds(10)
        while try DataDirectoryFiles.snapshots(in: data).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try DataDirectoryFiles.snapshots(in: data) == ["snapshot-00000000000000000001.snap"])
        // Nothing changed since: the next interval writes nothing new.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(try DataDirectoryFiles.snapshots(in: data) == ["snapshot-00000000000000000001.snap"])
        #expect(server.stop() == 0)
    }

    @Test func idsMadeAfterARestartNeverCollideWithIdsMadeBefore() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var ids = Set<String>()
        for _ in 0..<3 {
            let (server, port) = try Self.start(data, in: directory)
            let connection = try LineConnection(port: port)
            for _ in 0..<100 {
                let id = try #require(try connection.request(#"{"op":"grant","user":"same","product":"prod_pro"}"#).membershipID)
                #expect(ids.insert(id).inserted, "id \(id) was made twice")
            }
            _ = server.stop(with: SIGKILL)
        }
        let (server, port) = try Self.start(data, in: directory)
        let listed = try LineConnection(port: port).request(#"{"op":"memberships","user":"same"}"#)
        #expect((listed["memberships"] as? [[String: Any]])?.count == 300)
        #expect(server.stop() == 0)
    }

    @Test func aSecondServerOnTheSameDataDirectoryRefusesToStart() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (first, port) = try Self.start(data, in: directory)
        let second = ServerProcess(arguments: ["--port", "0", "--data-dir", data], workingDirectory: directory.path)
        #expect(try second.runToExit() != 0)
        #expect(second.standardErrorText().contains("is in use by another entitled (process \(first.process.processIdentifier))"))
        #expect(try LineConnection(port: port).request(#"{"op":"ping"}"#).ok == true)
        #expect(first.stop() == 0)
    }

    @Test func aSnapshotAnswersItsSizeAndDurationAndRemovesTheLogItCovers() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (server, port) = try Self.start(data, in: directory)
        let connection = try LineConnection(port: port)
        for index in 0..<20 {
            #expect(try connection.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).ok == true)
        }
        let first = try connection.request(#"{"op":"snapshot","id":1}"#)
        #expect(first.ok == true)
        #expect(first["sequence"] as? Int == 20)
        #expect(first["memberships"] as? Int == 20)
        #expect((first["bytes"] as? Int ?? 0) > 20 * 30)
        #expect(first["durationMs"] is Int)
        let file = try #require(first["file"] as? String)
        #expect(FileManager.default.fileExists(atPath: data + "/" + file))

        for index in 20..<30 {
            #expect(try connection.request(#"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).ok == true)
        }
        #expect(try connection.request(#"{"op":"snapshot"}"#)["sequence"] as? Int == 30)
        // One snapshot and the one log segment written since it: disk use stays bounded.
        #expect(try DataDirectoryFiles.snapshots(in: data) == ["snapshot-00000000000000000030.snap"])
        #expect(try DataDirectoryFiles.segments(in: data) == ["log-00000000000000000031.wal"])
        #expect(server.stop() == 0)
    }
}

/// What the storm's clients saw acknowledged, to check against the state after each kill -9.
final class AcknowledgedLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var grants: [(id: String, product: String)] = []
    private var revoked: Set<String> = []
    private var defined: [String] = []
    /// Guest memberships that a later acknowledged claim of their device must have given to some user.
    private var claimedGuests: Set<String> = []

    var acknowledgedGrants: Int { lock.withLock { grants.count } }

    func grant(id: String, product: String) { lock.withLock { grants.append((id, product)) } }
    func revoke(_ id: String) { lock.withLock { _ = revoked.insert(id) } }
    func define(_ entitlement: String) { lock.withLock { defined.append(entitlement) } }
    func claimed(_ guestIDs: [String]) { lock.withLock { claimedGuests.formUnion(guestIDs) } }

    func verify(against connection: LineConnection, users: [String], devices: [String]) throws {
        var seen: [String: [String: Any]] = [:]
        var productCounts: [String: Int] = [:]
        for line in try StateDump(of: connection, users: users, devices: devices).lines.dropLast() {
            let response = try JSONObject(line: line)
            for membership in response["memberships"] as? [[String: Any]] ?? [] {
                let id = membership["id"] as! String
                if seen[id] == nil { productCounts[membership["productId"] as! String, default: 0] += 1 }
                seen[id] = membership
            }
        }
        let catalog = try JSONObject(line: try StateDump(of: connection, users: [], devices: []).lines[0])
        let entitlements = catalog["entitlements"] as? [String: Any] ?? [:]
        try lock.withLock {
            for (id, product) in grants {
                guard seen[id] != nil else { throw LineConnection.Failure(description: "acknowledged grant \(id) is lost") }
                guard productCounts[product] == 1 else {
                    throw LineConnection.Failure(description: "product \(product) was granted once but appears \(productCounts[product] ?? 0) times")
                }
            }
            for id in revoked where seen[id]?["status"] as? String != "revoked" {
                throw LineConnection.Failure(description: "acknowledged revoke of \(id) is lost")
            }
            for id in claimedGuests where seen[id]?["user"] == nil {
                throw LineConnection.Failure(description: "membership \(id) should have been claimed")
            }
            for entitlement in defined where entitlements[entitlement] == nil {
                throw LineConnection.Failure(description: "acknowledged define of \(entitlement) is lost")
            }
        }
    }
}

/// One connection of the storm: grants, claims, revokes and defines as fast as answers come, until the
/// server dies under it.
final class StormClient: Sendable {
    let client: Int
    let port: Int
    let ledger: AcknowledgedLedger

    init(client: Int, port: Int, ledger: AcknowledgedLedger) {
        self.client = client
        self.port = port
        self.ledger = ledger
    }

    func run() {
        guard let connection = try? LineConnection(port: port, timeoutSeconds: 10) else { return }
        var random = SeededGenerator(state: UInt64(client) &+ 99)
        var mine: [String] = []
        var myGuests: [String: [String]] = [:]
        for step in 0..<100_000 {
            let user = DurabilityProcessTests.users.randomElement(using: &random)!
            let device = DurabilityProcessTests.devices.randomElement(using: &random)!
            let product = "p-\(client)-\(step)"
            let choice = Int.random(in: 0..<10, using: &random)
            do {
                switch choice {
                case 0...4:
                    let guest = Bool.random(using: &random)
                    let subject = guest ? #""device":"\#(device)""# : #""user":"\#(user)""#
                    let response = try connection.request(#"{"op":"grant",\#(subject),"product":"\#(product)"}"#)
                    guard response.ok == true, let id = response.membershipID else { return }
                    ledger.grant(id: id, product: product)
                    mine.append(id)
                    if guest { myGuests[device, default: []].append(id) }
                case 5, 6:
                    let response = try connection.request(#"{"op":"claim","device":"\#(device)","user":"\#(user)"}"#)
                    guard response.ok == true else { return }
                    ledger.claimed(myGuests.removeValue(forKey: device) ?? [])
                case 7...8 where !mine.isEmpty:
                    let id = mine.randomElement(using: &random)!
                    let response = try connection.request(#"{"op":"revoke","membership":"\#(id)"}"#)
                    guard response.ok == true else { return }
                    ledger.revoke(id)
                default:
                    let entitlement = "e-\(client)-\(step)"
                    let response = try connection.request(#"{"op":"define","entitlement":"\#(entitlement)","products":["\#(product)"]}"#)
                    guard response.ok == true else { return }
                    ledger.define(entitlement)
                }
            } catch {
                return  // the server was killed
            }
        }
    }
}
