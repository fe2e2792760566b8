import EntitledConsole
import Testing

/// The text of `help` and `help COMMAND`.
@Suite struct HelpTextTests {
    @Test func theOverviewListsEveryCommandButExitWithAlignedSummaries() {
        #expect(
            HelpText.overview(style: .plain) == """
                Commands (SUBJECT is user:ID or device:ID):
                  check     Is access active now (or at TIME)? Any product, one product or one entitlement.
                  grant     Create a membership of PRODUCT for a user, a device (a guest purchase) or both.
                  claim     A user logs in on a device: the device's guest memberships become the user's.
                  revoke    Take a membership back (refund, chargeback, manual); it stays listed as revoked.
                  show      List the memberships a subject can see, newest first, as a table.
                  define    Set the products that unlock an entitlement, replacing the ones it had.
                  catalog   List every entitlement and the products that unlock it.
                  snapshot  Write a snapshot of the whole state to the server's data directory now.
                  ping      Check that the server answers.
                  raw       Send one protocol line as it is and print the server's response line.
                  help      List the commands, or show one command's syntax and an example.
                  quit      Leave the console (also exit, or Ctrl-D).
                Type help COMMAND for its syntax and an example. Tab completes; Ctrl-R searches the history.
                """
        )
    }

    @Test func theOverviewBoldsTheCommandNamesWithoutChangingTheAlignment() {
        let lines = HelpText.overview(style: TextStyle(usesColor: true)).split(separator: "\n")
        #expect(lines[1] == "  \u{1B}[1mcheck\u{1B}[0m     Is access active now (or at TIME)? Any product, one product or one entitlement.")
        #expect(lines[8] == "  \u{1B}[1msnapshot\u{1B}[0m  Write a snapshot of the whole state to the server's data directory now.")
    }

    @Test func commandHelpShowsUsageSummaryDetailsAndExample() throws {
        #expect(
            HelpText.command(try spec("grant"), style: .plain) == """
                usage: grant SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN]
                Create a membership of PRODUCT for a user, a device (a guest purchase) or both.
                  SUBJECT is user:ID or device:ID; give both for a logged-in user on a device.
                  DURATION is a whole number and a unit s, m, h, d or w (30d, 12h, 2w); until TIME ends it at TIME.
                  Without either, or with lifetime, it never expires.
                  SOURCE is one of app_store, play_store, stripe, whop, manual, promotional; the default is manual.
                example: grant device:d1 prod_pro 30d source=app_store
                """
        )
    }

    @Test func commandHelpWithoutDetailsOrExampleIsUsageAndSummary() throws {
        #expect(HelpText.command(try spec("ping"), style: .plain) == "usage: ping\nCheck that the server answers.")
        #expect(
            HelpText.command(try spec("raw"), style: .plain) == """
                usage: raw JSON
                Send one protocol line as it is and print the server's response line.
                  The protocol is specified in Protocol/PROTOCOL.md.
                example: raw {"op":"check","user":"u1","product":"prod_pro"}
                """
        )
    }

    @Test func commandHelpBoldsTheUsage() throws {
        #expect(
            HelpText.command(try spec("quit"), style: TextStyle(usesColor: true))
                == "usage: \u{1B}[1mquit\u{1B}[0m\nLeave the console (also exit, or Ctrl-D)."
        )
    }

    @Test func commandSpecsAreFoundWithoutRegardToCase() throws {
        #expect(CommandSpec.named("GRANT")?.name == "grant")
        #expect(CommandSpec.named("Exit")?.name == "exit")
        #expect(CommandSpec.named("grants") == nil)
        #expect(CommandSpec.all.map(\.name) == [
            "check", "grant", "claim", "revoke", "show", "define", "catalog", "snapshot", "ping", "raw", "help", "quit", "exit",
        ])
    }
}
