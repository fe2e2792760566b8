import EntitledClient
@testable import EntitledCluster
import EntitledTestSupport
import Foundation
import Testing

/// A database of schema version 2 (before the history was anchored) upgraded by a node of this release.
extension ClusterTests {
    @Suite("Upgrading the cluster's schema")
    struct SchemaUpgrade {
        /// What version 3 added, taken away again, and version 2's procedure put back: a database as a node of
        /// the release before left it, with the rows a real node wrote.
        static func downgradeToVersion2(_ server: PostgresServer, url: String) throws {
            let version2Procedure = try #require(ClusterTables.migrations(schema: "entitled")[1].last)
            try server.psql(
                """
                DROP PROCEDURE entitled.commit_group;
                DROP PROCEDURE entitled.read_changes;
                DROP PROCEDURE entitled.mark_history;
                DROP TABLE entitled.durability;
                DELETE FROM entitled.meta WHERE key = 'database';
                ALTER TABLE entitled.head DROP COLUMN group_id;
                ALTER TABLE entitled.changes DROP COLUMN prev_group;
                ALTER TABLE entitled.snapshots DROP COLUMN group_id;
                UPDATE entitled.meta SET value = '2' WHERE key = 'schema_version';
                """,
                url: url
            )
            try server.psql(version2Procedure, url: url)
        }

        @Test func aVersion2DatabaseIsUpgradedAndItsHistoryGoesOnAnchored() throws {
            let server = try SharedPostgres.server()
            let url = try freshDatabase(on: server)
            let old = try ClusterNode(name: "old", url: url)
            for index in 0..<5 { try old.ok(#"{"op":"grant","user":"u\#(index)","product":"p1"}"#) }
            try old.ok(#"{"op":"snapshot"}"#)
            for index in 5..<8 { try old.ok(#"{"op":"grant","user":"u\#(index)","product":"p1"}"#) }
            old.stop()
            try Self.downgradeToVersion2(server, url: url)
            // As a retention would have left it: the changes the snapshot covers are gone.
            try server.psql("DELETE FROM entitled.changes WHERE seq <= 5; DELETE FROM entitled.groups WHERE last_seq <= 5", url: url)

            let upgraded = try ClusterNode(name: "upgraded", url: url)
            #expect(try server.psql("SELECT value FROM entitled.meta WHERE key = 'schema_version'", url: url) == "3")
            // The snapshot is anchored at minus its number (its change's row is gone), each change at the one before.
            #expect(try server.psql("SELECT group_id FROM entitled.snapshots", url: url) == "-5")
            #expect(try server.psql("SELECT prev_group FROM entitled.changes WHERE seq = 6", url: url) == "-5")
            #expect(
                try server.psql(
                    "SELECT count(*) FROM entitled.changes c JOIN entitled.changes p ON p.seq = c.seq - 1 WHERE c.prev_group <> p.group_id", url: url
                ) == "0"
            )
            // It serves everything, and writes on, numbered after it; a node starting now loads the same.
            for index in 0..<8 {
                #expect(try upgraded.ok(#"{"op":"check","user":"u\#(index)","product":"p1"}"#)["active"]?.boolValue == true)
            }
            #expect(try upgraded.ok(#"{"op":"grant","user":"u8","product":"p1"}"#).sequence == 9)
            let fresh = try ClusterNode(name: "fresh", url: url)
            #expect(try fresh.ok(#"{"op":"memberships","user":"u8","minSeq":9}"#).memberships?.count == 1)
            #expect(try fresh.ok(#"{"op":"grant","user":"u9","product":"p1"}"#).sequence == 10)
            #expect(try upgraded.ok(#"{"op":"stats"}"#)["replication"]?["divergences"]?.intValue == 0)
        }
    }
}
