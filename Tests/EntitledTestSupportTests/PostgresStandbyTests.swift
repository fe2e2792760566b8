import EntitledTestSupport
import Foundation
import Testing

/// The failover the cluster tests stage: a streaming standby made through a proxy, a replication link that
/// can be cut, a promotion, and a proxy re-pointed at the promoted server.
@Suite(.requiresPostgres, .serialized)
struct PostgresStandbyTests {
    @Test func aStandbyThroughAProxyReplaysWhatThePrimaryCommitsStopsWhenTheLinkIsCutAndTakesWritesOncePromoted() throws {
        let primary = try PostgresServer()
        let link = try FaultProxy(targetPort: primary.port)
        try primary.psql("CREATE TABLE kept (n int); INSERT INTO kept VALUES (1)")
        let standby = try PostgresServer(standbyOf: primary, through: link.port)
        #expect(standby.port != primary.port)
        #expect(standby.superuserPassword == primary.superuserPassword)
        #expect(try standby.isInRecovery())
        #expect(try !primary.isInRecovery())
        // The walreceiver reaches the primary through the proxy, and authenticates with the password file:
        // the password itself is not written into the standby's configuration.
        let conninfo = try standby.psql("SHOW primary_conninfo")
        #expect(conninfo.contains("port=\(link.port)") && conninfo.contains("passfile="), "\(conninfo)")
        #expect(!conninfo.contains(primary.superuserPassword))
        #expect(try primary.psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'") == "1")

        try primary.psql("INSERT INTO kept VALUES (2)")
        try standby.waitUntilReplayed(from: primary)
        #expect(try standby.psql("SELECT sum(n) FROM kept") == "3")
        // The same cluster: the primary's superuser and password over TCP.
        #expect(try standby.psql("SELECT count(*) FROM kept", url: standby.url()) == "2")

        try link.partition()
        try primary.psql("INSERT INTO kept VALUES (4)")
        #expect {
            try standby.waitUntilReplayed(from: primary, timeout: .seconds(2))
        } throws: { error in
            (error as? PostgresServerError)?.code == "not_replayed"
        }
        #expect(try standby.psql("SELECT sum(n) FROM kept") == "3")
        try link.heal()
        try standby.waitUntilReplayed(from: primary)
        #expect(try standby.psql("SELECT sum(n) FROM kept") == "7")

        primary.kill()
        try standby.promote()
        #expect(try !standby.isInRecovery())
        #expect(try standby.timeline() == 2)
        try standby.psql("INSERT INTO kept VALUES (8)")
        #expect(try standby.psql("SELECT sum(n) FROM kept") == "15")
    }

    @Test func aRetargetedProxyResetsItsOpenConnectionsAndSendsNewOnesToTheNewServer() throws {
        let first = try PostgresServer()
        let second = try PostgresServer()
        try first.psql("CREATE TABLE name AS SELECT 'first' AS server")
        try second.psql("CREATE TABLE name AS SELECT 'second' AS server")
        let proxy = try FaultProxy(targetPort: first.port)
        let url = { (server: PostgresServer) in proxy.proxied(server.url(), databasePort: server.port) }
        #expect(try first.psql("SELECT server FROM name", url: url(first)) == "first")

        // An idle connection through the proxy: the re-target resets it, as a failover breaks it.
        let open = try LoopbackSocket.connect(port: proxy.port, receiveTimeoutSeconds: 5)
        defer { close(open) }
        let deadline = ContinuousClock.now + .seconds(5)
        while try proxy.command("connections") != "1", ContinuousClock.now < deadline { usleep(10_000) }
        #expect(try proxy.command("connections") == "1")
        try proxy.retarget(port: second.port)
        var byte: UInt8 = 0
        let received = recv(open, &byte, 1, 0)
        let failure = errno
        #expect(received < 0 && failure == ECONNRESET, "recv gave \(received), errno \(failure)")
        #expect(try second.psql("SELECT server FROM name", url: url(second)) == "second")
        #expect(throws: TestSupportFailure.self) { try proxy.retarget(port: -1) }
    }
}
