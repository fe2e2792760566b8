import EntitledTestSupport
import Foundation
import Testing

import EntitledStores

/// The notifications the receiver keeps for later hold user ids and purchases: its directory and files
/// are its user's alone, as the server's data directory is.
@Suite struct UnmatchedNotificationFileTests {
    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func keptNotificationsAreReadableByTheirOwnerOnly() throws {
        let scratch = try TemporaryDirectory()
        let directory = scratch.path + "/unmatched"
        let kept = try UnmatchedNotifications(directory: directory)
        try kept.keep(store: "stripe", id: "evt_1", originalTransaction: "sub_1", reason: "no membership", body: Array("{}".utf8), now: 1)
        #expect(try mode(directory) == 0o700)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names == ["stripe-evt_1.json"])
        #expect(try mode(directory + "/stripe-evt_1.json") == 0o600)
    }
}
