import EntitledTestSupport
import Testing

/// One-shot commands against a real `entitled --auth FILE`: the token of `--token`, `--token-file` or
/// `ENTITLED_TOKEN` authenticates, a wrong one fails clearly without being shown, a role is enforced.
@Suite struct TokenOneShotTests {
    let admin = AuthFileEntry.admin.token

    @Test func anAdminTokenOnTheCommandLineMakesChangesInItsName() throws {
        let server = try RunningEntitled.requiringTokens()
        let grant = try ConsoleRun.run(server.portOption + ["--token", admin, "grant", "user:u1", "prod_pro", "lifetime"])
        #expect(grant.status == 0, "\(grant.standardError)")
        #expect(grant.standardOutput.contains("prod_pro  active  yes     lifetime"))
        #expect(grant.standardError.isEmpty)
        let check = try ConsoleRun.run(server.portOption + ["--token=\(admin)", "check", "user:u1", "prod_pro"])
        #expect(check.standardOutput == "active, lifetime\n")
        // The audit trail names the token's entry: the grant was made as "billing", not anonymously.
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func theEnvironmentVariableAuthenticatesLikeTheOption() throws {
        let server = try RunningEntitled.requiringTokens()
        let grant = try ConsoleRun.run(server.portOption + ["grant", "user:u2", "prod_pro"], environment: ["ENTITLED_TOKEN": admin])
        #expect(grant.status == 0, "\(grant.standardError)")
        #expect(try server.actors(of: "user:u2") == ["billing"])
    }

    @Test(arguments: [TokenSource.option, .file, .environment])
    func aWrongTokenExitsTwoNamingWhereItCameFromButNeverShowingIt(source: TokenSource) throws {
        let server = try RunningEntitled.requiringTokens()
        let wrong = "wrong-secret-5c1d9e7a3f08b246"
        let (arguments, environment, phrase) = try source.giving(wrong, server: server)
        let run = try ConsoleRun.run(server.portOption + arguments + ["grant", "user:u3", "prod_pro"], environment: environment)
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError == "error: 127.0.0.1:\(server.port) refused the token from \(phrase) (unauthorized: unknown token)\n")
        #expect(!run.standardError.contains(wrong))
        #expect(try server.actors(of: "user:u3").isEmpty)
    }

    @Test func aCheckTokenChecksButIsRefusedAGrantWithAReadableForbidden() throws {
        let server = try RunningEntitled.requiringTokens()
        let check = AuthFileEntry.check.token
        let allowed = try ConsoleRun.run(server.portOption + ["check", "user:u1", "prod_pro"], environment: ["ENTITLED_TOKEN": check])
        #expect(allowed.status == 0)
        #expect(allowed.standardOutput == "not active\n")
        let grant = try ConsoleRun.run(server.portOption + ["grant", "user:u1", "prod_pro"], environment: ["ENTITLED_TOKEN": check])
        #expect(grant.status == 1)
        #expect(grant.standardError.hasPrefix("(error) forbidden: this connection's role may not run grant; it may run "))
        #expect(!grant.standardError.contains("hint:"))
        #expect(try server.actors(of: "user:u1").isEmpty)
    }

    @Test func withoutATokenTheRefusalComesWithAHintOnHowToGiveOne() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(server.portOption + ["check", "user:u1", "prod_pro"])
        #expect(run.status == 1)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.first?.hasPrefix("(error) unauthorized: check needs authentication") == true, "\(run.standardError)")
        #expect(lines.last == "hint: this server requires a token: give it with --token-file FILE or the ENTITLED_TOKEN environment variable (or --token)")
        // ping needs no token, so a person can still see that the server is there.
        #expect(try ConsoleRun.run(server.portOption + ["ping"]).standardOutput == "pong\n")
    }

    @Test func theOptionWinsOverTheEnvironmentVariable() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(
            server.portOption + ["--token", admin, "grant", "user:u4", "prod_pro"], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token]
        )
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try server.actors(of: "user:u4") == ["billing"])
    }

    @Test func anEmptyEnvironmentVariableCountsAsNoToken() throws {
        let server = try RunningEntitled.requiringTokens()
        let run = try ConsoleRun.run(server.portOption + ["check", "user:u1", "prod_pro"], environment: ["ENTITLED_TOKEN": ""])
        #expect(run.status == 1)
        #expect(run.standardError.contains("hint: this server requires a token"))
    }

    @Test func anEmptyTokenOptionIsAUsageError() throws {
        let run = try ConsoleRun.run(["--token", "", "ping"])
        #expect(run.status == 2)
        #expect(run.standardError.contains("--token must not be empty"))
    }
}

/// The three ways of giving the token, for tests that try each.
enum TokenSource: CaseIterable, Sendable {
    case option, file, environment

    /// The options and environment of `entitlectl` that give `token` this way, and how its messages name
    /// the way.
    func giving(_ token: String, server: RunningEntitled) throws -> (arguments: [String], environment: [String: String], phrase: String) {
        switch self {
        case .option:
            return (["--token", token], [:], "--token")
        case .environment:
            return ([], ["ENTITLED_TOKEN": token], "ENTITLED_TOKEN")
        case .file:
            let path = try server.writeFile("token", token + "\n")
            return (["--token-file", path], [:], "the token file \(path)")
        }
    }
}
