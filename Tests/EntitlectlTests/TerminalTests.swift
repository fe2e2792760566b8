import EntitledTestSupport
import Foundation
import Testing

/// The interactive console on a real pseudo-terminal: line editing, completion, hints, history.
@Suite struct TerminalTests {
    /// Starts the console on a terminal, connected to `server`, with its history in `historyPath`.
    func console(_ server: RunningEntitled, historyPath: String) throws -> PseudoTerminal {
        try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: ["--port", String(server.port)],
            environment: [
                "TERM": "xterm", "HOME": server.directory.path, "ENTITLECTL_HISTFILE": historyPath,
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ]
        )
    }

    @Test func tabCompletesACommandNameAndAProductNameFromTheCatalog() throws {
        let server = try RunningEntitled()
        _ = try ConsoleRun.run(["--port", String(server.port), "define", "pro", "prod_unique_product", "other_product"])
        let terminal = try console(server, historyPath: server.directory.path + "/history")
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("GR\t")
        try terminal.waitFor("grant ")
        try terminal.type("user:u1 prod_u\t")
        try terminal.waitFor("unique_product")
        try terminal.type("lifetime\r")
        try terminal.waitFor("active  yes")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)

        let show = try ConsoleRun.run(["--port", String(server.port), "--json", "show", "user:u1"])
        #expect(show.standardOutput.contains(#""productId":"prod_unique_product""#))
    }

    @Test func tabCompletesAnEntitlementDefinedElsewhereAfterTheConsoleStarted() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        // Defined by another console once this one has read the catalog.
        #expect(try ConsoleRun.run(["--port", String(server.port), "define", "latecomer", "prod_latecomer"]).status == 0)
        // The catalog completion knows is read again once it is a few seconds old.
        Thread.sleep(forTimeInterval: Double(5_200) / 1000)
        try terminal.type("check user:u1 entitlement:lat\t")
        try terminal.waitFor("entitlement:latecomer ")
        try terminal.type("\r")
        try terminal.waitFor("not active")
        try terminal.type("grant user:u1 prod_lat\t")
        try terminal.waitFor("prod_latecomer ")
        try terminal.type("lifetime\r")
        try terminal.waitFor("active  yes")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
    }

    @Test func ambiguousTabListsTheCandidates() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("> ")
        try terminal.type("c\t")
        let drawn = try terminal.waitFor("customer")
        #expect(drawn.contains("catalog   changes   check     claim     customer"))
    }

    @Test func theRightPromptHintsTheArgumentsOfTheCommandTyped() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("> ")
        try terminal.type("revoke ")
        try terminal.waitFor("MEMBERSHIP [REASON...]")
    }

    @Test func upArrowRecallsACommandAfterTheConsoleRestarts() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let first = try console(server, historyPath: history)
        try first.waitFor("> ")
        try first.type("grant user:recall prod_recalled\r")
        try first.waitFor("prod_recalled  active")
        try first.waitFor("> ")
        try first.type("\u{04}")  // Ctrl-D, so that the grant stays the newest line of the history
        #expect(try first.waitForExit() == 0)

        let second = try console(server, historyPath: history)
        try second.waitFor("> ")
        try second.type("\u{1B}[A")
        try second.waitFor("prod_recalled")
        try second.type("\r")
        try second.waitFor("prod_recalled  active")
        let show = try ConsoleRun.run(["--port", String(server.port), "--json", "show", "user:recall"])
        #expect(show.standardOutput.components(separatedBy: "prod_recalled").count == 3)  // two memberships
    }

    @Test func eachCommandIsSavedAtOnceAndCtrlRFindsItAgain() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let terminal = try console(server, historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type("grant user:searched prod_found_by_search\r")
        try terminal.waitFor("prod_found_by_search  active")
        try terminal.waitFor("> ")
        // Saved after the command, while the console still runs: a crash or a kill loses nothing typed.
        #expect(try String(contentsOfFile: history, encoding: .utf8).contains("prod_found_by_search"))
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.waitFor("> ")
        try terminal.type("\u{12}found_by")
        try terminal.waitFor("prod_found_by_search")
        try terminal.type("\r")
        try terminal.waitFor("prod_found_by_search  active")
        let show = try ConsoleRun.run(["--port", String(server.port), "--json", "show", "user:searched"])
        #expect(show.standardOutput.components(separatedBy: "prod_found_by_search").count == 3)  // two memberships
    }

    @Test func aLineCarryingATokenNeverReachesTheHistoryFile() throws {
        let server = try RunningEntitled()
        let history = server.directory.path + "/history"
        let terminal = try console(server, historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type(#"raw {"op":"auth","token":"s3cret-value"}"# + "\r")
        // A server without authentication accepts any token, as the local admin.
        try terminal.waitFor(#""role":"admin""#)
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        let saved = try String(contentsOfFile: history, encoding: .utf8)
        #expect(saved.contains("ping"))
        #expect(!saved.contains("s3cret"))
        let attributes = try FileManager.default.attributesOfItem(atPath: history)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func ctrlCClearsTheLineAndCtrlDLeaves() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("> ")
        try terminal.type("grant user:u1 prod_never")
        try terminal.waitFor("prod_never")
        try terminal.type("\u{03}")
        try terminal.waitFor("^C")
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.waitFor("> ")
        try terminal.type("\u{04}")
        #expect(try terminal.waitForExit() == 0)
        // Had Ctrl-C not cleared the line, "grant user:u1 prod_neverping" would have been sent.
        let show = try ConsoleRun.run(["--port", String(server.port), "show", "user:u1"])
        #expect(show.standardOutput == "(no memberships)\n")
    }

    @Test func thePromptSaysWhenTheServerIsGoneAndTheNextCommandReconnects() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        server.stop()
        try terminal.type("ping\r")
        try terminal.waitFor("cannot connect to 127.0.0.1:\(server.port): connection refused")
        try terminal.waitFor("not connected> ")
        try server.restart()
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
    }

    @Test func changesPushedToAWatchShowAtTheNextPrompt() throws {
        let server = try RunningEntitled()
        let terminal = try console(server, historyPath: "/dev/null")
        try terminal.waitFor("> ")
        try terminal.type("watch user:pushed\r")
        try terminal.waitFor("1 watch on this connection")
        try terminal.waitFor("> ")
        let grant = try ConsoleRun.run(["--port", String(server.port), "grant", "user:pushed", "prod_pushed", "lifetime"])
        #expect(grant.status == 0)
        try terminal.type("\r")
        try terminal.waitFor("push grant: mem_")
        try terminal.waitFor("prod_pushed active, access for life, user:pushed")
    }

    @Test func aPushOfAMembershipThatEndsSaysWhatAccessItsOwnerStillHas() throws {
        let server = try RunningEntitled()
        let port = String(server.port)
        #expect(try ConsoleRun.run(["--port", port, "define", "pro", "prod_a", "prod_b"]).status == 0)
        let kept = try ConsoleRun.run(["--port", port, "grant", "user:uma", "prod_b", "1y"])
        #expect(kept.status == 0)
        let watcher = try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: ["--port", port, "--no-color", "watch", "user:uma"],
            environment: ["TERM": "xterm", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        )
        try watcher.waitFor("1 watch on this connection")
        let grant = try ConsoleRun.run(["--port", port, "grant", "user:uma", "prod_a", "30d"])
        try watcher.waitFor("push grant: mem_")
        let id = grant.standardOutput.split(separator: "\n").last?.split(separator: " ").first.map(String.init) ?? ""
        #expect(try ConsoleRun.run(["--port", port, "--yes", "revoke", id, "refund"]).status == 0)
        // The revoked membership gives no access, but uma still has pro through prod_b: said so.
        try watcher.waitFor("push revoke: \(id) prod_a revoked, no access through it, user:uma; user:uma still has pro until ")
        server.stop()
        _ = try watcher.waitForExit()
    }

    @Test func aOneShotWatchKeepsPrintingTheChangesUntilTheConnectionEnds() throws {
        let server = try RunningEntitled()
        let watcher = try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: ["--port", String(server.port), "--no-color", "watch", "device:followed"],
            environment: ["TERM": "xterm", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        )
        try watcher.waitFor("1 watch on this connection")
        let grant = try ConsoleRun.run(["--port", String(server.port), "grant", "device:followed", "prod_a", "30d"])
        try watcher.waitFor("push grant: mem_")
        try watcher.waitFor("prod_a active, access until ")
        let id = grant.standardOutput.split(separator: "\n").last?.split(separator: " ").first.map(String.init) ?? ""
        #expect(try ConsoleRun.run(["--port", String(server.port), "--yes", "revoke", id, "refund"]).status == 0)
        try watcher.waitFor("push revoke: \(id) prod_a revoked, no access through it, device:followed (guest); device:followed has no access left")
        // It follows until interrupted or until the connection ends: here the server stops.
        server.stop()
        try watcher.waitFor("error: 127.0.0.1:\(server.port) closed the connection; the watch has ended")
        #expect(try watcher.waitForExit() == 2)
    }
}
