import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// Starting a node with a bad `--postgres` fails at once with a message that names what to fix, and
/// never prints the password; a role that owns only its own schema is enough.
extension ClusterTests {
    @Suite("Cluster configuration")
    struct Configuration {
    /// Runs `entitled` with `arguments` until it exits; returns its status and standard error.
    static func failedStart(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        let directory = try TemporaryDirectory()
        let process = ServerProcess(arguments: arguments + ["--port", "0"], workingDirectory: directory.path)
        let status = try process.runToExit()
        return (status, process.standardErrorText())
    }

    @Test func aWrongPasswordIsNamedAndNotPrinted() throws {
        let server = try SharedPostgres.server()
        let url = server.url(password: "hunter2-wrong")
        let (status, errors) = try Self.failedStart(["--postgres", url])
        #expect(status != 0)
        #expect(errors.contains("wrong password"), "\(errors)")
        #expect(!errors.contains("hunter2-wrong"))
    }

    @Test func aMissingDatabaseIsNamed() throws {
        let server = try SharedPostgres.server()
        let (status, errors) = try Self.failedStart(["--postgres", server.url(database: "no_such_db", password: server.superuserPassword)])
        #expect(status != 0)
        #expect(errors.contains("has no database no_such_db"), "\(errors)")
        #expect(!errors.contains(server.superuserPassword))
    }

    @Test func anUnreachableServerIsNamed() throws {
        let (status, errors) = try Self.failedStart(["--postgres", "postgres://app:pw@127.0.0.1:1/db"])
        #expect(status != 0)
        #expect(errors.contains("cannot connect to the database at postgres://app@127.0.0.1:1/db"), "\(errors)")
    }

    @Test func aMalformedURLAndADataDirectoryBesideItAreRefused() throws {
        let bad = try Self.failedStart(["--postgres", "postgres://app:pw@db/x?sslmode=maybe"])
        #expect(bad.status != 0)
        #expect(bad.errors.contains("sslmode"), "\(bad.errors)")
        let both = try Self.failedStart(["--postgres", "postgres://app:pw@db/x", "--data-dir", "d"])
        #expect(both.status != 0)
        #expect(both.errors.contains("--data-dir and --postgres exclude each other"), "\(both.errors)")
    }

    @Test func aSchemaFromANewerVersionIsRefused() throws {
        let server = try SharedPostgres.server()
        let url = try freshDatabase(on: server)
        _ = try ClusterNode(name: "creator", url: url)
        _ = try server.psql("UPDATE entitled.meta SET value = '99' WHERE key = 'schema_version'", url: url)
        let (status, errors) = try Self.failedStart(["--postgres", url])
        #expect(status != 0)
        #expect(errors.contains("schema is version 99"), "\(errors)")
        #expect(errors.contains("upgrade entitled"), "\(errors)")
    }

    @Test func aRoleThatOwnsOnlyItsSchemaRunsANode() throws {
        let server = try SharedPostgres.server()
        let database = "t\(UInt32.random(in: 0...UInt32.max))"
        try server.createDatabase(database)
        try server.createRole("ent_\(database)", password: "role-pw", owningSchema: "entitled", in: database)
        let url = server.url(database: database, user: "ent_\(database)", password: "role-pw")
        let node = try ClusterNode(name: "limited", url: url)
        let grant = try node.ok(#"{"op":"grant","user":"u","product":"p1"}"#)
        #expect(grant.sequence == 1)
        // Another schema is refused with what to do.
        let elsewhere = try Self.failedStart(["--postgres", url + "?schema=other"])
        #expect(elsewhere.status != 0)
        #expect(elsewhere.errors.contains("may not create the schema other"), "\(elsewhere.errors)")
    }
}
}
