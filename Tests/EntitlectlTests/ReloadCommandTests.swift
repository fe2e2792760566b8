import EntitledTestSupport
import Testing

/// `entitlectl reload` against a real `entitled --auth FILE`: the server re-reads the file.
@Suite struct ReloadCommandTests {
    @Test func reloadPutsTheRewrittenAuthFileInForceAndSaysHowManyTokens() throws {
        let server = try RunningEntitled.requiringTokens()
        let added = AuthFileEntry(name: "late-reader", token: "late-reader-0123456789abcdef", role: "check")
        try AuthFileEntry.writeAuthFile([.admin, .check, added], to: try #require(server.authFilePath))

        let reload = try ConsoleRun.run(server.portOption + ["reload"], environment: ["ENTITLED_TOKEN": AuthFileEntry.admin.token])
        #expect(reload.status == 0, "\(reload.standardError)")
        #expect(reload.standardOutput == "reloaded the auth file: 3 tokens\n")

        let check = try ConsoleRun.run(server.portOption + ["check", "user:u1", "prod_pro"], environment: ["ENTITLED_TOKEN": added.token])
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.standardOutput == "not active\n")
    }

    @Test func aCheckTokenIsRefusedReload() throws {
        let server = try RunningEntitled.requiringTokens()
        let reload = try ConsoleRun.run(server.portOption + ["reload"], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token])
        #expect(reload.status == 1)
        #expect(reload.standardError.hasPrefix("(error) forbidden: this connection's role may not run reload"), "\(reload.standardError)")
    }
}
