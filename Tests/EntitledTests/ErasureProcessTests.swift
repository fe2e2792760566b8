import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Erasure of a person (`erase`, GDPR's right to be forgotten) against the real `entitled` process: once
/// acknowledged, every read answers as for someone who never existed; once a snapshot has been written,
/// no file of the data directory holds their id, after a clean restart and after `kill -9` alike.
@Suite("Erasure in the real server process", .serialized)
struct ErasureProcessTests {
    /// Ids no other byte of the directory could hold by chance.
    static let user = "erasable-user-7c1f9a"
    static let device = "erasable-device-3b8e24"

    /// Grants, claims, revokes and an event for the person, and some of another user's data that must
    /// stay; then erases the person and checks every read.
    static func populateAndErase(_ connection: EntitledAsyncConnection) async throws {
        func ok(_ line: String) async throws -> EntitledResponse {
            let response = try await connection.send(line: line)
            #expect(response.isOK, "\(line) -> \(response.line)")
            return response
        }
        _ = try await ok(#"{"op":"define","entitlement":"pro","products":["prod_pro","prod_basic"]}"#)
        let guest = try #require(try await ok(#"{"op":"grant","device":"\#(device)","product":"prod_pro","duration":"30d","idempotencyKey":"order-\#(device)"}"#).membership)
        _ = try await ok(#"{"op":"claim","device":"\#(device)","user":"\#(user)","reason":"login"}"#)
        let owned = try #require(try await ok(#"{"op":"grant","user":"\#(user)","product":"prod_basic","reason":"support ticket 81","idempotencyKey":"k-\#(user)"}"#).membership)
        _ = try await ok(#"{"op":"revoke","membership":"\#(owned.id)","reason":"refund"}"#)
        _ = try await ok(#"{"op":"event","membership":"\#(guest.id)","type":"renewal","eventId":"evt-\#(user)","eventTime":"2025-01-01T00:00:00Z","expiresAt":"2099-01-01T00:00:00Z","transactionId":"tx-\#(user)"}"#)
        // Another user bought on the person's device while logged in: stays, without the device.
        let other = try #require(try await ok(#"{"op":"grant","user":"someone-else","device":"\#(device)","product":"prod_pro"}"#).membership)
        #expect(try await ok(#"{"op":"check","user":"\#(user)","entitlement":"pro"}"#)["active"]?.boolValue == true)

        let erased = try await ok(#"{"op":"erase","user":"\#(user)","device":"\#(device)","reason":"GDPR request 2291"}"#)
        #expect(erased.line.contains(#""erased":{"memberships":2,"historyEntries":"#), "\(erased.line)")

        for line in [
            #"{"op":"check","user":"\#(user)"}"#, #"{"op":"check","device":"\#(device)"}"#,
            #"{"op":"check","user":"\#(user)","at":"2025-06-01T00:00:00Z"}"#,
            #"{"op":"check","user":"\#(user)","device":"\#(device)","entitlement":"pro"}"#,
        ] {
            #expect(try await ok(line).line.contains(#""active":false"#), "\(line)")
        }
        for subject in [#""user":"\#(user)""#, #""device":"\#(device)""#] {
            #expect(try await ok(#"{"op":"memberships",\#(subject)}"#).memberships?.isEmpty == true)
            #expect(try await ok(#"{"op":"memberships",\#(subject),"at":"2025-06-01T00:00:00Z"}"#).memberships?.isEmpty == true)
            #expect(try await ok(#"{"op":"history",\#(subject)}"#).history?.isEmpty == true)
            #expect(try await ok(#"{"op":"customer",\#(subject)}"#).customer?.allPurchasedProductIds.isEmpty == true)
        }
        // The ids the person's memberships had are gone; the other user's membership stays, without the device.
        let revoke = try await connection.send(line: #"{"op":"revoke","membership":"\#(owned.id)"}"#)
        #expect(revoke.error?.code == .notFound)
        let kept = try #require(try await ok(#"{"op":"memberships","user":"someone-else"}"#).memberships)
        #expect(kept.map(\.id) == [other.id])
        #expect(kept.first?.device == nil)
        // The trail keeps the erasure, without the id.
        let trail = try await ok(#"{"op":"history","erasures":true}"#)
        #expect(trail.line.contains(#""action":"erase""#), "\(trail.line)")
        #expect(!trail.line.contains(user) && !trail.line.contains(device))
    }

    /// The names of the files of `directory` (and below) whose bytes contain `text`.
    static func files(in directory: String, containing text: String) throws -> [String] {
        let needle = Data(text.utf8)
        let enumerator = FileManager.default.enumerator(atPath: directory)
        var found: [String] = []
        while let name = enumerator?.nextObject() as? String {
            let path = directory + "/" + name
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            if try Data(contentsOf: URL(fileURLWithPath: path)).range(of: needle) != nil { found.append(name) }
        }
        return found
    }

    @Test func afterASnapshotAndARestartNoFileHoldsTheErasedIds() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try DurabilityProcessTests.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
        try await Self.populateAndErase(connection)
        // Before the snapshot the log holds the records that name the person, the erase included.
        #expect(try !Self.files(in: data, containing: Self.user).isEmpty)
        #expect(try await connection.send(line: #"{"op":"snapshot"}"#).isOK)
        await connection.close()
        #expect(server.stop() == 0)
        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        for id in [Self.user, Self.device, "order-\(Self.device)", "k-\(Self.user)", "evt-\(Self.user)", "tx-\(Self.user)"] {
            #expect(try Self.files(in: data, containing: id) == [], "\(id)")
        }
        // And the state after the restart is the erased one.
        #expect(try await connection.send(line: #"{"op":"memberships","user":"\#(Self.user)"}"#).memberships?.isEmpty == true)
        #expect(try await connection.send(line: #"{"op":"memberships","user":"someone-else"}"#).memberships?.count == 1)
        #expect(try await connection.send(line: #"{"op":"history","erasures":true}"#).line.contains(#""action":"erase""#))
        await connection.close()
        #expect(server.stop() == 0)
    }

    @Test func afterKillNineTheLogReplaysTheErasureAndTheNextSnapshotRemovesTheIds() async throws {
        let directory = try TemporaryDirectory()
        let data = directory.path + "/data"
        var (server, port) = try DurabilityProcessTests.start(data, in: directory)
        var connection = try await EntitledAsyncConnection.local(port: port)
        try await Self.populateAndErase(connection)
        await connection.close()
        _ = server.stop(with: SIGKILL)
        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        connection = try await EntitledAsyncConnection.local(port: port)
        // Replayed from the log: the person is erased again.
        #expect(try await connection.send(line: #"{"op":"check","user":"\#(Self.user)"}"#).line.contains(#""active":false"#))
        #expect(try await connection.send(line: #"{"op":"history","device":"\#(Self.device)"}"#).history?.isEmpty == true)
        #expect(try !Self.files(in: data, containing: Self.user).isEmpty)
        #expect(try await connection.send(line: #"{"op":"snapshot"}"#).isOK)
        for id in [Self.user, Self.device] {
            #expect(try Self.files(in: data, containing: id) == [], "\(id)")
        }
        await connection.close()
        #expect(server.stop() == 0)
        (server, port) = try DurabilityProcessTests.start(data, in: directory)
        for id in [Self.user, Self.device] {
            #expect(try Self.files(in: data, containing: id) == [], "\(id)")
        }
        #expect(server.stop() == 0)
    }

    @Test func aTypoInAGrantChangesNothingOverARealSocket() async throws {
        let directory = try TemporaryDirectory()
        let (server, port) = try DurabilityProcessTests.start(directory.path + "/data", in: directory)
        let connection = try await EntitledAsyncConnection.local(port: port)
        let refused = try await connection.send(line: #"{"op":"grant","user":"bob","product":"pro","duraton":"P1M"}"#)
        #expect(refused.error?.code == .badRequest)
        #expect(refused.error?.message == #"unknown field "duraton" (did you mean "duration"?)"#)
        #expect(try await connection.send(line: #"{"op":"memberships","user":"bob"}"#).memberships?.isEmpty == true)
        let stats = try await connection.send(line: #"{"op":"stats"}"#)
        #expect(stats["persistence"]?["lastChange"]?.intValue == 0, "\(stats.line)")
        await connection.close()
        #expect(server.stop() == 0)
    }
}
