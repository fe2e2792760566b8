import EntitledTestSupport
import Foundation
import Testing

/// The test PostgreSQL server the cluster tests stand on: that it starts, keeps its data over a stop and a
/// kill, refuses a wrong password, and that the limited role is limited.
@Suite(.requiresPostgres, .serialized)
struct PostgresServerTests {
    @Test func aStartedServerAnswersSQLOnTheUnixSocketAndOverTCPWithThePassword() throws {
        let server = try PostgresServer()
        #expect(server.isRunning)
        #expect(server.port > 0 && server.port != 5432)
        #expect(try server.psql("SELECT 1 + 1") == "2")
        #expect(try server.psql("SELECT current_user", url: server.url()) == PostgresServer.superuser)
        let version = try #require(Int(try server.psql("SHOW server_version_num")))
        #expect(version >= PostgresInstallation.oldestSupportedMajorVersion * 10_000)
        #expect(try server.psql("SHOW listen_addresses") == "127.0.0.1")
        #expect(try server.psql("SHOW unix_socket_directories") == server.socketDirectory)
    }

    @Test func aWrongPasswordIsRefused() throws {
        let server = try PostgresServer()
        #expect {
            try server.psql("SELECT 1", url: server.url(password: "not-the-password"))
        } throws: { error in
            guard case .psqlFailed(_, _, let output) = error as? PostgresServerError else { return false }
            return output.contains("password authentication failed")
        }
        #expect {
            try server.psql("SELECT 1", url: server.url(password: ""))
        } throws: { error in
            guard case .psqlFailed = error as? PostgresServerError else { return false }
            return true
        }
    }

    @Test func dataSurvivesAStopAndAStartOnTheSamePort() throws {
        let server = try PostgresServer()
        let port = server.port
        try server.psql("CREATE TABLE kept (n int); INSERT INTO kept VALUES (1), (2)")
        try server.stop()
        #expect(!server.isRunning)
        #expect(throws: PostgresServerError.self) { try server.psql("SELECT 1", url: server.url()) }
        try server.start()
        #expect(server.port == port)
        #expect(try server.psql("SELECT sum(n) FROM kept") == "3")
    }

    @Test func aKilledServerTakesNoConnectionsAndRecoversItsCommittedDataOnTheNextStart() throws {
        let server = try PostgresServer()
        let port = server.port
        try server.psql("CREATE TABLE kept (n int); INSERT INTO kept SELECT generate_series(1, 1000)")
        let pid = try #require(server.postmasterPID())
        server.kill()
        #expect(!server.isRunning)
        #expect(Glibc.kill(pid, 0) != 0 || isZombie(pid))
        #expect(throws: PostgresServerError.self) { try server.psql("SELECT 1", url: server.url()) }
        try server.start()
        #expect(server.port == port)
        #expect(try server.psql("SELECT count(*) FROM kept") == "1000")
        #expect(server.logTail(lines: 200).contains("database system was interrupted") || server.logTail(lines: 200).contains("was not properly shut down"))
    }

    @Test func aRoleThatOwnsOnlyItsSchemaCreatesTablesThereAndNowhereElse() throws {
        let server = try PostgresServer()
        try server.createDatabase("entitlements")
        try server.createRole("node", password: "node pass:/@word", in: "entitlements")
        let url = server.url(database: "entitlements", user: "node", password: "node pass:/@word")
        #expect(try server.psql("SELECT current_user, current_schema()", url: url) == "node|entitled")
        // Unqualified names land in its schema.
        try server.psql("CREATE TABLE changes (seq bigint PRIMARY KEY); INSERT INTO changes VALUES (1)", url: url)
        #expect(try server.psql("SELECT count(*) FROM entitled.changes", database: "entitlements") == "1")
        // Even `IF NOT EXISTS` of its own schema needs CREATE on the database, which it has not: a node
        // must look the schema up rather than create it when it exists.
        let refusals = [
            "CREATE TABLE public.elsewhere (n int)", "CREATE SCHEMA other", "CREATE DATABASE other",
            "CREATE SCHEMA IF NOT EXISTS entitled",
        ]
        for refused in refusals {
            #expect(throws: PostgresServerError.self, "\(refused)") { try server.psql(refused, url: url) }
        }
        #expect(throws: PostgresServerError.self) {
            try server.psql("SELECT 1", url: server.url(database: "entitlements", user: "node", password: "wrong"))
        }
    }

    @Test func terminatedConnectionsDropWhileTheServerKeepsRunning() throws {
        let server = try PostgresServer()
        try server.createDatabase("entitlements")
        // A session that waits, holding its connection, as a node's listening connection does.
        let waiting = Process()
        waiting.executableURL = URL(fileURLWithPath: server.installation.psql)
        waiting.arguments = ["-X", "-w", "-d", server.url(database: "entitlements"), "-c", "SELECT pg_sleep(60)"]
        waiting.standardOutput = FileHandle.nullDevice
        waiting.standardError = FileHandle.nullDevice
        try waiting.run()
        // A generous deadline: psql may be slow to start and connect on a machine busy with the whole suite.
        let deadline = ContinuousClock.now + .seconds(30)
        while try server.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = 'entitlements'") != "1", ContinuousClock.now < deadline {
            usleep(20_000)
        }
        #expect(try server.terminateConnections(database: "entitlements") == 1)
        waiting.waitUntilExit()
        #expect(waiting.terminationStatus != 0)
        #expect(try server.psql("SELECT 1", url: server.url(database: "entitlements")) == "1")
    }

    @Test func aPausedServerAnswersNothingUntilItIsResumed() throws {
        let server = try PostgresServer()
        server.pause()
        let started = ContinuousClock.now
        #expect(throws: PostgresServerError.self) {
            try server.psql("SELECT 1", url: server.url() + "?connect_timeout=2")
        }
        #expect(ContinuousClock.now - started < .seconds(10))
        server.resume()
        #expect(try server.psql("SELECT 1", url: server.url()) == "1")
    }

    @Test func closingStopsTheServerAndRemovesItsDirectory() throws {
        let server = try PostgresServer()
        let pid = try #require(server.postmasterPID())
        server.close()
        #expect(!FileManager.default.fileExists(atPath: server.directory))
        #expect(Glibc.kill(pid, 0) != 0 || isZombie(pid))
    }

    @Test func aServerWhoseTestProcessDiedIsKilledAndRemovedByTheNextTestProcess() throws {
        let abandoned = try PostgresServer()
        let pid = try #require(abandoned.postmasterPID())
        // A test process that has exited: one this test started and waited for.
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        try String(exited.processIdentifier).write(
            toFile: abandoned.directory + "/test-process.pid", atomically: false, encoding: .utf8
        )
        let kept = try PostgresServer()  // this process's own: left alone
        PostgresServer.removeAbandonedServers()
        #expect(!FileManager.default.fileExists(atPath: abandoned.directory))
        let deadline = ContinuousClock.now + .seconds(10)
        while Glibc.kill(pid, 0) == 0, !isZombie(pid), ContinuousClock.now < deadline { usleep(10_000) }
        #expect(Glibc.kill(pid, 0) != 0 || isZombie(pid))
        #expect(try kept.psql("SELECT 1") == "1")
    }

    private func isZombie(_ pid: pid_t) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
    }

    @Test func twoServersAreSeparateClustersOnTheirOwnPorts() throws {
        // Whatever runs on 5432 (Debian's `main` cluster, or nothing), each test server is its own.
        let first = try PostgresServer()
        let second = try PostgresServer()
        #expect(first.port != second.port)
        try first.psql("CREATE TABLE only_in_first (n int)")
        #expect(try second.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_first'") == "0")
    }
}
