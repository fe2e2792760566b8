import EntitledTestSupport
import Foundation
import Testing

/// In the interactive console, a watched change appears as soon as the server pushes it, above the line
/// being typed, which is drawn again below it and can be finished as if nothing happened.
@Suite struct LiveWatchTests {
    @Test func aPushedChangeAppearsAboveTheLineBeingTypedWhichStaysAndCanBeFinished() throws {
        let server = try RunningEntitled()
        let terminal = try PseudoTerminal.console(server)
        try terminal.waitFor("> ")
        try terminal.type("watch user:live\r")
        try terminal.waitFor("1 watch on this connection")
        try terminal.waitFor("> ")

        try terminal.type("check user:live prod_li")  // no Enter: the person is still typing
        try terminal.waitFor("prod_li")
        let grant = try ConsoleRun.run(["--port", String(server.port), "grant", "user:live", "prod_live", "lifetime"])
        #expect(grant.status == 0)
        // Shown before Enter: waiting for the next command would time out here.
        try terminal.waitFor("push grant: mem_")
        try terminal.waitFor("prod_live active, access for life, user:live")
        // The prompt and the half-typed command are drawn again under it.
        try terminal.waitFor("127.0.0.1:\(server.port)> check user:live prod_li")

        try terminal.type("ve\r")
        try terminal.waitFor("active, lifetime")
        try terminal.waitFor("> ")
        try terminal.type("quit\r")
        #expect(try terminal.waitForExit() == 0)
    }

    /// The console reads keys itself (to watch for pushes meanwhile), so it decodes them itself too, in
    /// the terminal's encoding.
    @Test func keysBeyondASCIIAreReadWholeInAUTF8Locale() throws {
        let server = try RunningEntitled()
        let terminal = try PseudoTerminal.console(server, environment: ["LC_ALL": "C.UTF-8"])
        try terminal.waitFor("> ")
        try terminal.type("grant user:zoë prod_naïve_€\r")
        try terminal.waitFor("prod_naïve_€  active")
        let show = try ConsoleRun.run(["--port", String(server.port), "--json", "show", "user:zoë"])
        #expect(show.standardOutput.contains(#""productId":"prod_naïve_€""#), "\(show.standardOutput)")
    }
}
