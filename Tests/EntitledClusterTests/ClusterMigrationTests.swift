import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-datadir to-postgres` and `from-postgres` between a real data directory and a real database.
extension ClusterTests {
    @Suite("Copying between a data directory and a cluster")
    struct Migration {
    static func tool(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ServerProcess.runToCompletion("entitled-datadir", arguments)
    }

    @Test func aDataDirectoryCopiedIntoADatabaseAndBackServesTheSameAnswers() throws {
        let server = try SharedPostgres.server()
        let url = try freshDatabase(on: server)
        // A standalone server's state.
        let standalone = try RunningEntitled()
        let connection = EntitledConnection(address: .tcp(host: "127.0.0.1", port: standalone.port))
        try connection.connect()
        _ = try connection.send(line: #"{"op":"define","entitlement":"pro","products":["p1"]}"#)
        let granted = try #require(try connection.send(line: #"{"op":"grant","user":"moved","product":"p1","idempotencyKey":"m1"}"#).membership)
        connection.close()
        #expect(standalone.stop() == 0)

        let into = try Self.tool(["to-postgres", standalone.directory.path + "/entitled-data", "--postgres", url])
        #expect(into.status == 0, "\(into.output)")
        #expect(!into.output.contains(server.superuserPassword))
        let again = try Self.tool(["to-postgres", standalone.directory.path + "/entitled-data", "--postgres", url])
        #expect(again.status != 0)
        #expect(again.output.contains("already holds"), "\(again.output)")

        // A node serves it, numbering on after it.
        let node = try ClusterNode(name: "n1", url: url)
        #expect(try node.ok(#"{"op":"check","user":"moved","entitlement":"pro"}"#)["active"]?.boolValue == true)
        let replay = try node.ok(#"{"op":"grant","user":"moved","product":"p1","idempotencyKey":"m1"}"#)
        #expect(replay.membership?.id == granted.id)
        let next = try node.ok(#"{"op":"grant","user":"new","product":"p1"}"#)
        #expect(next.sequence == 3)

        // And back: a backup a standalone server starts from.
        let backup = try TemporaryDirectory()
        let out = try Self.tool(["from-postgres", "--postgres", url, backup.path + "/restored"])
        #expect(out.status == 0, "\(out.output)")
        let restored = ServerProcess(arguments: ["--data-dir", backup.path + "/restored", "--port", "0"], workingDirectory: backup.path)
        let port = try #require(try restored.startAndWaitUntilReady())
        defer { _ = restored.stop() }
        let check = EntitledConnection(address: .tcp(host: "127.0.0.1", port: port))
        try check.connect()
        defer { check.close() }
        for user in ["moved", "new"] {
            #expect(try check.send(line: #"{"op":"check","user":"\#(user)","entitlement":"pro"}"#)["active"]?.boolValue == true)
        }
    }
}
}
