import EntitledTestSupport
import Foundation
import Testing

/// The interactive console with a token, on a real pseudo-terminal against a real `entitled --auth`:
/// it authenticates, and again after a reconnection; the token stays out of `ps` and of the history.
@Suite struct TokenTerminalTests {
    let admin = AuthFileEntry.admin.token

    /// Starts the console on a terminal with `arguments` (after the port) and `environment` added.
    func console(
        _ server: RunningEntitled, arguments: [String] = [], environment: [String: String] = [:], historyPath: String = "/dev/null"
    ) throws -> PseudoTerminal {
        try PseudoTerminal(
            executable: ConsoleRun.executableURL,
            arguments: server.portOption + arguments,
            environment: [
                "TERM": "xterm", "HOME": server.directory.path, "ENTITLECTL_HISTFILE": historyPath,
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            ].merging(environment) { $1 }
        )
    }

    @Test(arguments: [TokenSource.option, .file, .environment])
    func theConsoleAuthenticatesWithAnAdminToken(source: TokenSource) throws {
        let server = try RunningEntitled.requiringTokens()
        let (arguments, environment, _) = try source.giving(admin, server: server)
        let terminal = try console(server, arguments: arguments, environment: environment)
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        try terminal.type("grant user:u1 prod_pro lifetime\r")
        try terminal.waitFor("prod_pro  active  yes")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func aRefusedTokenEndsTheConsoleWithStatusTwoWithoutShowingIt() throws {
        let server = try RunningEntitled.requiringTokens()
        let wrong = "wrong-secret-5c1d9e7a3f08b246"
        let terminal = try console(server, environment: ["ENTITLED_TOKEN": wrong])
        try terminal.waitFor("error: 127.0.0.1:\(server.port) refused the token from ENTITLED_TOKEN (unauthorized: unknown token)")
        #expect(try terminal.waitForExit() == 2)
        #expect(!terminal.transcript.contains(wrong))
    }

    @Test func aCheckTokenIsRefusedAGrantWithAReadableForbidden() throws {
        let server = try RunningEntitled.requiringTokens()
        let terminal = try console(server, arguments: ["--no-color"], environment: ["ENTITLED_TOKEN": AuthFileEntry.check.token])
        try terminal.waitFor("> ")
        try terminal.type("grant user:u1 prod_pro\r")
        try terminal.waitFor("(error) forbidden: this connection's role may not run grant")
        try terminal.type("check user:u1 prod_pro\r")
        try terminal.waitFor("not active")
    }

    /// `ps` shows `/proc/PID/cmdline`; entitlectl overwrites a `--token` value there as it starts.
    @Test(arguments: [false, true])
    func aTokenOnTheCommandLineIsOverwrittenInTheProcessArguments(joinedWithEquals: Bool) throws {
        let server = try RunningEntitled.requiringTokens()
        let arguments = joinedWithEquals ? ["--token=\(admin)"] : ["--token", admin]
        let terminal = try console(server, arguments: arguments)
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        let commandLine = ProcFile.text("/proc/\(terminal.processIdentifier)/cmdline")
        #expect(!commandLine.contains(admin))
        // Read while the console runs: the arguments are still there, the token's bytes overwritten in place.
        let hidden = String(repeating: "x", count: admin.utf8.count)
        #expect(commandLine.contains(joinedWithEquals ? "\0--token=\(hidden)\0" : "\0--token\0\(hidden)\0"), "\(commandLine.debugDescription)")
        // Authenticated all the same: the token was copied out before it was overwritten.
        try terminal.type("grant user:u1 prod_pro\r")
        try terminal.waitFor("prod_pro  active")
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    @Test func theHistoryFileNeverHoldsTheToken() throws {
        let server = try RunningEntitled.requiringTokens()
        let history = server.directory.path + "/history"
        let file = try server.writeFile("token", admin + "\n")
        let terminal = try console(server, arguments: ["--token-file", file], historyPath: history)
        try terminal.waitFor("> ")
        try terminal.type("grant user:u1 prod_remembered\r")
        try terminal.waitFor("prod_remembered  active")
        // The ways a token gets typed at the prompt: an auth request, and the token pasted by mistake.
        try terminal.type(#"raw {"op":"auth","token":"\#(admin)"}"# + "\r")
        try terminal.waitFor(#""name":"billing""#)
        try terminal.type(admin + "\r")
        try terminal.waitFor("unknown command")
        try terminal.type("ping\r")
        try terminal.waitFor("pong")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
        let saved = try String(contentsOfFile: history, encoding: .utf8)
        // libedit writes spaces as \040: look for single words.
        #expect(saved.contains("prod_remembered"))
        #expect(saved.contains("ping"))
        #expect(!saved.contains(admin))
        #expect(!saved.contains("auth"))
    }

    /// The server closes a connection idle for `--idle-timeout` seconds; the console opens a new one for
    /// the next command, and must authenticate it too (or the command would be refused `unauthorized`).
    @Test func afterTheServerClosesTheIdleConnectionTheNextCommandAuthenticatesAgain() throws {
        let server = try RunningEntitled.requiringTokens(arguments: ["--idle-timeout", "1"])
        let terminal = try console(server, environment: ["ENTITLED_TOKEN": admin])
        // The prompt names the server only once the console has connected and authenticated.
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        // Not a fixed sleep: wait until the server has really closed the idle connection (which may
        // already have happened on a busy machine; the next test shows the connection would be seen).
        try ProcessSockets.waitUntil("the server closes the idle connection") {
            ProcessSockets.establishedConnections(ofProcess: terminal.processIdentifier, toPort: server.port).isEmpty
        }
        try terminal.type("grant user:u1 prod_pro\r")
        try terminal.waitFor("prod_pro  active")
        #expect(try server.actors(of: "user:u1") == ["billing"])
    }

    /// What the test above relies on: while the server keeps it, the console's connection is seen, so
    /// "no connection" there really means the server closed it.
    @Test func theConsolesConnectionIsSeenWhileTheServerKeepsIt() throws {
        let server = try RunningEntitled.requiringTokens()
        let terminal = try console(server, environment: ["ENTITLED_TOKEN": admin])
        try terminal.waitFor("127.0.0.1:\(server.port)> ")
        #expect(ProcessSockets.establishedConnections(ofProcess: terminal.processIdentifier, toPort: server.port).count == 1)
    }
}
