import EntitledTestSupport
import Testing

/// A script piped into `entitlectl` against a server that requires a token.
@Suite struct TokenScriptTests {
    @Test(arguments: [TokenSource.option, .file, .environment])
    func aScriptWithAnAdminTokenRunsEveryLine(source: TokenSource) throws {
        let server = try RunningEntitled.requiringTokens()
        let (arguments, environment, _) = try source.giving(AuthFileEntry.admin.token, server: server)
        let script = "define pro prod_pro\ngrant user:u1 prod_pro lifetime\ncheck user:u1 entitlement:pro\n"
        let run = try ConsoleRun.run(server.portOption + arguments, input: script, environment: environment)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput.hasSuffix("\nactive, lifetime\n"))
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func aScriptWithAWrongTokenStopsAtItsFirstCommandWithStatusTwo() throws {
        let server = try RunningEntitled.requiringTokens()
        let wrong = "wrong-secret-5c1d9e7a3f08b246"
        let run = try ConsoleRun.run(
            server.portOption, input: "grant user:u1 prod_a\ngrant user:u1 prod_b\n", environment: ["ENTITLED_TOKEN": wrong]
        )
        #expect(run.status == 2)
        #expect(run.standardError == "line 1: error: 127.0.0.1:\(server.port) refused the token from ENTITLED_TOKEN (unauthorized: unknown token)\n")
        #expect(!run.standardError.contains(wrong))
        #expect(try server.actors(of: "user:u1").isEmpty)
    }

    @Test func aScriptWithACheckTokenStopsAtTheForbiddenGrantWithStatusOne() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(
            server.portOption, input: "check user:u1 prod_pro\ngrant user:u1 prod_pro\nping\n",
            environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token]
        )
        #expect(run.status == 1)
        #expect(run.standardOutput == "not active\n")
        #expect(run.standardError.hasPrefix("line 2: (error) forbidden: this connection's role may not run grant"))
    }
}
