import EntitledCore
import Foundation
import Testing

@testable import EntitledStorage

/// Log segments, snapshots and the lock hold personal data: a data directory the server creates is its
/// user's alone (0700), and so is every file it creates there (0600), whatever the process's umask lets
/// through (the tests' umask, 022, would give 0755 and 0644).
@Suite struct DataFilePermissionTests {
    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aNewDataDirectoryAndEveryFileInItAreTheOwnersAlone() throws {
        try withScratchDirectory { scratch in
            let directory = scratch + "/nested/data"
            do {
                let durable = try DurableStore(directory: directory, policy: .always)
                defer { durable.close() }
                _ = try durable.store.grant(Grant(subject: .user("ada"), productId: "prod_pro"))
                _ = try durable.snapshot()
                _ = try durable.store.grant(Grant(subject: .user("bob"), productId: "prod_pro"))
            }
            #expect(try mode(directory) == 0o700)
            // Parents are made as `mkdir -p` makes them.
            #expect(try mode(scratch + "/nested") == 0o755)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names.contains { $0.hasPrefix("snapshot-") })
            #expect(names.contains { $0.hasPrefix("log-") })
            for name in names {
                #expect(try mode(directory + "/" + name) == 0o600, "\(name)")
            }
        }
    }
}
