import EntitledClient
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

    /// Whether `task` ends within `timeout`; if not it is cancelled (a storm client's wait then fails).
    static func finishes(_ task: Task<Void, Never>, within timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await task.value
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            if !first { task.cancel() }  // else the group would wait for the task it gave up on
            group.cancelAll()
            return first
        }
    }

    static let users = (0..<6).map { "user-\($0)" }
    static let devices = (0..<6).map { "device-\($0)" }

    @Test func aGracefulStopAndStartGiveTheSameStateForRandomOperations() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var random = SeededRandom(seed: 314)
        var (server, port) = try Self.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
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
            let response = try await connection.send(line: line)
            #expect(response.isOK, "\(line) -> \(response.line)")
            if let id = response.membership?.id { ids.append(id) }
        }
        let before = try await StateDump(of: connection, users: Self.users, devices: Self.devices)
        #expect(server.stop() == 0)

        (server, port) = try Self.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        let after = try await StateDump(of: connection, users: Self.users, devices: Self.devices)
        #expect(before == after)
        #expect(server.stop() == 0)
    }

    @Test func killNineAfterLifecycleChangesKeepsEveryAcknowledgedEventKeyAndAuditEntry() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try Self.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
        let grant = try await connection.send(
            line: #"{"op":"grant","device":"device-0","product":"prod_pro","duration":"30d","willRenew":true,"periodType":"trial","transactionId":"tx_1","idempotencyKey":"order-1","reason":"import"}"#)
        let id = try #require(grant.membership?.id)
        for line in [
            #"{"op":"claim","device":"device-0","user":"user-0","reason":"login"}"#,
            #"{"op":"event","membership":"\#(id)","type":"renewal","eventId":"e1","eventTime":"2025-01-01T00:00:00Z","expiresAt":"2031-01-01T00:00:00Z","transactionId":"tx_2"}"#,
            #"{"op":"snapshot"}"#,
            #"{"op":"event","membership":"\#(id)","type":"billing_issue","eventId":"e2","eventTime":"2025-02-01T00:00:00Z","gracePeriodExpiresAt":"2031-02-01T00:00:00Z"}"#,
        ] {
            #expect(try await connection.send(line: line).isOK, "\(line)")
        }
        let before = try await StateDump(of: connection, users: Self.users, devices: Self.devices)
        kill(server.process.processIdentifier, SIGKILL)
        server.process.waitUntilExit()

        (server, port) = try Self.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await StateDump(of: connection, users: Self.users, devices: Self.devices) == before)
        let duplicate = try await connection.send(line: #"{"op":"event","membership":"\#(id)","type":"cancellation","eventId":"e2","eventTime":"2025-03-01T00:00:00Z"}"#)
        #expect(duplicate["reason"]?.stringValue == "duplicate")
        let retried = try await connection.send(
            line: #"{"op":"grant","device":"device-0","product":"prod_pro","duration":"30d","idempotencyKey":"order-1"}"#)
        #expect(retried.membership?.id == id)
        #expect(retried["idempotentReplay"]?.boolValue == true)
        #expect(server.stop() == 0)
    }

    @Test func killNineDuringAStormOfWritesLosesNothingAcknowledgedAndAppliesNothingTwice() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let ledger = AcknowledgedLedger()
        for round in 0..<6 {
            let (server, port) = try Self.start(data, in: directory)
            // Everything acknowledged in earlier rounds survived the kill -9 before this start.
            try await ledger.verify(against: .local(port: port), users: Self.users, devices: Self.devices)

            let clients = (0..<4).map { StormClient(client: round * 10 + $0, port: port, ledger: ledger) }
            let grantsBefore = ledger.acknowledgedGrants
            let storm = Task {
                await withTaskGroup(of: Void.self) { group in
                    for client in clients { group.addTask { await client.run() } }
                }
            }
            try await Task.sleep(for: .milliseconds(150 + 60 * round))
            // The kill must land in a storm that writes: on a loaded machine the clients' tasks may not have
            // run yet, so wait (within 30 s) until this round has had some grants acknowledged.
            let storming = ContinuousClock.now + .seconds(30)
            while ledger.acknowledgedGrants < grantsBefore + 10, ContinuousClock.now < storming {
                try await Task.sleep(for: .milliseconds(5))
            }
            kill(server.process.processIdentifier, SIGKILL)
            server.process.waitUntilExit()
            #expect(await Self.finishes(storm, within: .seconds(30)), "clients did not notice the kill")
        }
        let (server, port) = try Self.start(data, in: directory)
        try await ledger.verify(against: .local(port: port), users: Self.users, devices: Self.devices)
        #expect(ledger.acknowledgedGrants > 50, "the storm acknowledged too little to prove anything: \(ledger.acknowledgedGrants)")
        #expect(server.stop() == 0)
    }

    @Test func cuttingTheLogAtEveryByteOfItsLastRecordStartsWithExactlyTheRecordsBeforeIt() async throws {
        let directory = try TemporaryDirectory()
        let original = directory.path + "/original"
        let (server, port) = try Self.start(original, in: directory)
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#).isOK)
        #expect(try await connection.send(line: #"{"op":"grant","user":"first","product":"prod_pro"}"#).isOK)
        #expect(try await connection.send(line: #"{"op":"grant","user":"last","product":"prod_pro","duration":"30d"}"#).isOK)
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
            let check = try await EntitledAsyncConnection.local(port: restartedPort)
            #expect(try await check.send(line: #"{"op":"check","user":"first","entitlement":"pro"}"#).active == true, "cut at \(cut)")
            #expect(try await check.send(line: #"{"op":"check","user":"last"}"#).active == false, "cut at \(cut)")
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
        let connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<5 {
            #expect(try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).isOK)
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
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"prod_pro"}"#).isOK)
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
        var connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<25 {
            #expect(try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).isOK)
        }
        _ = server.stop(with: SIGKILL)  // the answered writes were handed to the OS, which outlives the process
        (server, port) = try Self.start(data, in: directory, extra: ["--fsync", policy])
        connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<25 {
            #expect(try await connection.send(line: #"{"op":"check","user":"u\#(index)"}"#).active == true)
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
        let connection = try await EntitledAsyncConnection.local(port: port)
        #expect(try await connection.send(line: #"{"op":"grant","user":"u1","product":"prod_pro"}"#).isOK)
        // A generous deadline: the server may be slow to get its turn on a machine busy with the whole suite.
        let deadline = ContinuousClock.now + .seconds(30)
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
            let connection = try await EntitledAsyncConnection.local(port: port)
            for _ in 0..<100 {
                let id = try #require(try await connection.send(line: #"{"op":"grant","user":"same","product":"prod_pro"}"#).membership?.id)
                #expect(ids.insert(id).inserted, "id \(id) was made twice")
            }
            _ = server.stop(with: SIGKILL)
        }
        let (server, port) = try Self.start(data, in: directory)
        let listed = try await EntitledAsyncConnection.local(port: port).send(line: #"{"op":"memberships","user":"same","limit":1000}"#)
        #expect(listed["memberships"]?.arrayValue?.count == 300)
        #expect(server.stop() == 0)
    }

    @Test func aSecondServerOnTheSameDataDirectoryRefusesToStart() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (first, port) = try Self.start(data, in: directory)
        let second = ServerProcess(arguments: ["--port", "0", "--data-dir", data], workingDirectory: directory.path)
        #expect(try second.runToExit() != 0)
        #expect(second.standardErrorText().contains("is in use by another entitled (process \(first.process.processIdentifier))"))
        #expect(try await EntitledAsyncConnection.local(port: port).send(line: #"{"op":"ping"}"#).isOK)
        #expect(first.stop() == 0)
    }

    @Test func aSnapshotAnswersItsSizeAndDurationAndRemovesTheLogItCovers() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        let (server, port) = try Self.start(data, in: directory)
        let connection = try await EntitledAsyncConnection.local(port: port)
        for index in 0..<20 {
            #expect(try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).isOK)
        }
        let first = try await connection.send(line: #"{"op":"snapshot","id":1}"#)
        #expect(first.isOK)
        #expect(first["sequence"]?.intValue == 20)
        #expect(first["memberships"]?.intValue == 20)
        #expect((first["bytes"]?.intValue ?? 0) > 20 * 30)
        #expect(first["durationMs"]?.intValue != nil)
        let file = try #require(first["file"]?.stringValue)
        #expect(FileManager.default.fileExists(atPath: data + "/" + file))

        for index in 20..<30 {
            #expect(try await connection.send(line: #"{"op":"grant","user":"u\#(index)","product":"prod_pro"}"#).isOK)
        }
        #expect(try await connection.send(line: #"{"op":"snapshot"}"#)["sequence"]?.intValue == 30)
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

    func verify(against connection: EntitledAsyncConnection, users: [String], devices: [String]) async throws {
        var seen: [String: JSONValue] = [:]
        var productCounts: [String: Int] = [:]
        for line in try await StateDump(of: connection, users: users, devices: devices).lines.dropLast() {
            for membership in try EntitledResponse(line: line)["memberships"]?.arrayValue ?? [] {
                guard let id = membership["id"]?.stringValue, let product = membership["productId"]?.stringValue else {
                    throw TestSupportFailure(description: "a membership without an id or a product: \(line)")
                }
                if seen[id] == nil { productCounts[product, default: 0] += 1 }
                seen[id] = membership
            }
        }
        let catalog = try EntitledResponse(line: try await StateDump(of: connection, users: [], devices: []).lines[0])
        try lock.withLock {
            for (id, product) in grants {
                guard seen[id] != nil else { throw TestSupportFailure(description: "acknowledged grant \(id) is lost") }
                guard productCounts[product] == 1 else {
                    throw TestSupportFailure(description: "product \(product) was granted once but appears \(productCounts[product] ?? 0) times")
                }
            }
            for id in revoked where seen[id]?["status"]?.stringValue != "revoked" {
                throw TestSupportFailure(description: "acknowledged revoke of \(id) is lost")
            }
            for id in claimedGuests where seen[id]?["user"]?.stringValue == nil {
                throw TestSupportFailure(description: "membership \(id) should have been claimed")
            }
            for entitlement in defined where catalog["entitlements"]?[entitlement] == nil {
                throw TestSupportFailure(description: "acknowledged define of \(entitlement) is lost")
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

    func run() async {
        guard let connection = try? await EntitledAsyncConnection.local(port: port) else { return }
        var random = SeededRandom(seed: UInt64(client) &+ 99)
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
                    let response = try await connection.send(line: #"{"op":"grant",\#(subject),"product":"\#(product)"}"#)
                    guard response.isOK, let id = response.membership?.id else { return }
                    ledger.grant(id: id, product: product)
                    mine.append(id)
                    if guest { myGuests[device, default: []].append(id) }
                case 5, 6:
                    let response = try await connection.send(line: #"{"op":"claim","device":"\#(device)","user":"\#(user)"}"#)
                    guard response.isOK else { return }
                    ledger.claimed(myGuests.removeValue(forKey: device) ?? [])
                case 7...8 where !mine.isEmpty:
                    let id = mine.randomElement(using: &random)!
                    let response = try await connection.send(line: #"{"op":"revoke","membership":"\#(id)"}"#)
                    guard response.isOK else { return }
                    ledger.revoke(id)
                default:
                    let entitlement = "e-\(client)-\(step)"
                    let response = try await connection.send(line: #"{"op":"define","entitlement":"\#(entitlement)","products":["\#(product)"]}"#)
                    guard response.isOK else { return }
                    ledger.define(entitlement)
                }
            } catch {
                return  // the server was killed
            }
        }
    }
}
