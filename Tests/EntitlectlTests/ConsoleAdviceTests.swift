import EntitledTestSupport
import Foundation
import Testing

/// Mistakes the console catches and explains in its own words: a misspelt option, an entitlement
/// checked as a product, an event without what its type needs, and in a script the line it was on.
@Suite struct ConsoleAdviceTests {
    @Test func aMisspeltOptionIsRefusedWithTheOptionMeantAndNothingIsGranted() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        let run = try ConsoleRun.run(port + ["grant", "user:bob", "prod_pro", "30d", "sorce=stripe"])
        #expect(run.status == 2)
        #expect(run.standardError == "error: unknown option \"sorce=\" for grant (did you mean \"source=\"?)\n")
        #expect(try ConsoleRun.run(port + ["show", "user:bob"]).standardOutput == "(no memberships)\n")
    }

    @Test func aOneShotCheckOfAnEntitlementAsAProductShowsTheRightSpelling() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["define", "pro", "prod_pro_monthly"]).status == 0)
        #expect(try ConsoleRun.run(port + ["grant", "user:bob", "prod_pro_monthly"]).status == 0)
        let run = try ConsoleRun.run(port + ["check", "user:bob", "pro"])
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        // The server's answer comes first: it is true of the product, only not of the entitlement.
        #expect(
            run.standardError
                == "error: not active: pro is an entitlement, not a product; to check the entitlement: check user:bob entitlement:pro\n"
        )
        let json = try ConsoleRun.run(port + ["--json", "check", "user:bob", "pro"])
        #expect(json.status == 2)
        #expect(json.standardOutput == #"{"ok":true,"active":false}"# + "\n")
        #expect(json.standardError.hasPrefix("error: not active: pro is an entitlement"))
        let right = try ConsoleRun.run(port + ["check", "user:bob", "entitlement:pro"])
        #expect(right.status == 0)
        #expect(right.standardOutput == "active, lifetime\n")
    }

    @Test func aScriptReadsTheCatalogOnceForAllItsInactiveProductChecks() throws {
        let server = try RunningEntitled()
        let port = ["--port", String(server.port)]
        #expect(try ConsoleRun.run(port + ["define", "pro", "prod_pro"]).status == 0)
        let run = try ConsoleRun.run(port + ["--continue"], input: "check user:a prod_x\ncheck user:b prod_y\ncheck user:c pro\n")
        #expect(run.status == 2)
        #expect(run.standardOutput == "not active\nnot active\n")
        #expect(run.standardError == "line 3: error: pro is an entitlement, not a product: check user:c entitlement:pro\n")
        let stats = try ConsoleRun.run(port + ["stats"]).standardOutput.split(separator: "\n")
        let rows = stats.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        // The catalog read after the first inactive check also lets the third be refused before it is sent.
        #expect(rows.contains("catalog 1") && rows.contains("check 2"), "\(stats)")
    }

    @Test func theInteractiveConsoleKnowsTheCatalogAndSaysSoBeforeSending() throws {
        let server = try RunningEntitled()
        #expect(try ConsoleRun.run(["--port", String(server.port), "define", "gold", "prod_gold"]).status == 0)
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("> ")
        try terminal.type("check user:bob gold\r")
        try terminal.waitFor("error: gold is an entitlement, not a product: check user:bob entitlement:gold")
    }

    @Test func anEventWithoutItsExpiryNamesTheConsolesArgument() throws {
        let server = try RunningEntitled()
        let run = try ConsoleRun.run(["--port", String(server.port), "event", "mem_0000000000000", "renewal", "id=evt_1"])
        #expect(run.status == 2)
        #expect(run.standardError.hasPrefix("error: renewal needs `until TIME`"), "\(run.standardError)")
        #expect(!run.standardError.contains("expiresAt"))
    }

    @Test func scriptErrorsStartWithTheirLineNumber() throws {
        let server = try RunningEntitled()
        let script = "ping\n\n# a comment\nfrobnicate\ncheck user:u1 entitlement:gold\n"
        let run = try ConsoleRun.run(["--port", String(server.port), "--continue"], input: script)
        #expect(run.status == 2)
        let lines = run.standardError.split(separator: "\n").map(String.init)
        #expect(lines.first == "line 4: error: unknown command 'frobnicate'; type help for the list of commands", "\(run.standardError)")
        #expect(lines.contains { $0.hasPrefix("line 5: (error) not_found: ") }, "\(run.standardError)")
    }
}
