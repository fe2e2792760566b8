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
                  extend    Give a membership more time: move its expiry later by a DURATION, or to a TIME.
                  event     Apply a store's event to a membership: a renewal, a cancellation, a billing issue, a refund...
                  show      List the memberships a subject can see, or those of a store transaction, newest first, as a table.
                  customer  Show what a subject is entitled to, entitlement by entitlement (RevenueCat's CustomerInfo).
                  history   Show the audit trail of a subject's memberships or of an entitlement, newest first.
                  define    Set the products that unlock an entitlement, replacing the ones it had.
                  undefine  Remove an entitlement from the catalog: no product unlocks it any more.
                  erase     Erase a person (right to be forgotten): every membership, device link and history entry naming them.
                  catalog   List every entitlement and the products that unlock it.
                  watch     Show each change of a subject's access (or everyone's) as the server pushes it.
                  unwatch   Stop watching a subject (or everyone); with nothing, stop every watch.
                  changes   Show the change feed: every change the server made, oldest first, a page at a time.
                  export    Write a full copy of every membership, as of one change, as JSON lines.
                  webhooks  Show entitled-stores' webhook endpoints, their lag and failed deliveries; resume one, redeliver a message.
                  snapshot  Write a snapshot of the whole state to the server's data directory now.
                  stats     Show the server's counters: requests, errors, latency, connections, store size, log and snapshot.
                  reload    Have the server re-read its auth file (--auth), as SIGHUP does.
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
        #expect(lines[19] == "  \u{1B}[1msnapshot\u{1B}[0m  Write a snapshot of the whole state to the server's data directory now.")
    }

    @Test func commandHelpShowsUsageSummaryDetailsAndExample() throws {
        #expect(
            HelpText.command(try spec("grant"), style: .plain) == """
                usage: grant SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]
                Create a membership of PRODUCT for a user, a device (a guest purchase) or both.
                  SUBJECT is user:ID or device:ID; give both for a logged-in user on a device.
                  DURATION is a whole number and a unit s, min, h, d, w, mo or y (30d, 12h, 1mo, 1y); mo and y are
                  calendar months and years (a month from January 31 ends on February's last day); until TIME ends
                  it at TIME.
                  Without either, or with lifetime, it never expires.
                  SOURCE is one of app_store, play_store, stripe, whop, manual, promotional; the default is manual.
                  More options, for store purchases (each defaults to the first value listed):
                    renews=no|yes  the store will renew it at its expiry
                    period=normal|trial|intro|promotional  env=production|sandbox
                    ownership=purchased|family_shared  type=purchase|family_sharing|offer_code|manual
                    transaction=ID  original=ID  the store's transaction and original transaction ids
                    key=KEY  an idempotency key: the same grant again with it creates nothing new
                    reason=TEXT  kept in the history (quote it when it has spaces: reason="gift for a tester")
                example: grant device:d1 prod_pro 30d source=app_store
                """
        )
    }

    @Test func eventHelpSaysTheTimeDefaultsToNowAndWhichTypeTakesWhichOption() throws {
        #expect(
            HelpText.command(try spec("event"), style: .plain) == """
                usage: event MEMBERSHIP TYPE id=EVENT [at=TIME] [until TIME] [grace=TIME] [product=PRODUCT] [transaction=ID] [reason=TEXT]
                Apply a store's event to a membership: a renewal, a cancellation, a billing issue, a refund...
                  TYPE is one of renewal, cancellation, uncancellation, billing_issue, billing_recovered, expiration, pause, resume, product_change, refund, extension, refund_reversal.
                  id=EVENT is the store's id of the event: the same id again is ignored as a duplicate.
                  at=TIME is when the event happened (default: now); one older than the last applied is ignored.
                  until TIME is the new expiry: required for renewal and extension, optional for resume.
                  grace=TIME ends a billing_issue's grace period; product=PRODUCT is a product_change's new product.
                  transaction=ID is the store's transaction; reason=TEXT is kept in the history.
                example: event mem_1ymr6jcw5jqzv renewal id=evt_1 until 2027-01-22
                """
        )
    }

    @Test func extendHelpSaysWhatADurationIsAddedToWhatATimeMustBeAndWhatCannotBeExtended() throws {
        #expect(
            HelpText.command(try spec("extend"), style: .plain) == """
                usage: extend MEMBERSHIP DURATION | TIME [REASON...]
                Give a membership more time: move its expiry later by a DURATION, or to a TIME.
                  DURATION is a whole number and a unit s, min, h, d, w, mo or y (7d, 1mo), as for grant: it is added
                  to the expiry, or to now when the membership has already expired.
                  TIME is the new expiry (2027-01-01 is midnight UTC; until TIME also works): later than the current
                  expiry and than now.
                  REASON is free text (the words after, reason=TEXT, or one quoted string), kept in the history.
                  A revoked membership, or one that never expires, cannot be extended.
                  A DURATION given twice extends twice; a TIME given twice is refused the second time, as not later.
                example: extend mem_1ymr6jcw5jqzv 1mo outage on 2026-11-20
                """
        )
    }

    /// Extending only adds access, as a grant does: neither asks first, and neither needs `--yes` in a
    /// script or a one-shot command. Only the commands that remove or take back data do.
    @Test func onlyTheCommandsThatRemoveOrTakeBackDataAskFirst() {
        #expect(CommandSpec.all.filter(\.needsConfirmation).map(\.name) == ["revoke", "undefine", "erase"])
    }

    @Test func historyAndWatchHelpNameTheirAlternatives() throws {
        #expect(HelpText.command(try spec("history"), style: .plain).hasPrefix("usage: history SUBJECT [SUBJECT] | entitlement:NAME [limit=N] [after=CURSOR]\n"))
        #expect(HelpText.command(try spec("history"), style: .plain).contains("limit=N shows at most N entries, from 1 to 1000"))
        let watch = HelpText.command(try spec("watch"), style: .plain)
        #expect(watch.hasPrefix("usage: watch SUBJECT [SUBJECT] | all\n"))
        #expect(watch.contains("As a one-shot command (entitlectl watch user:u1) it keeps printing them until interrupted."))
        #expect(HelpText.command(try spec("unwatch"), style: .plain).hasPrefix("usage: unwatch [SUBJECT [SUBJECT] | all]\n"))
    }

    @Test func changesAndExportHelpSayWhereThePagesGoOnAndWhereTheFeedContinues() throws {
        let changes = HelpText.command(try spec("changes"), style: .plain)
        #expect(changes.hasPrefix("usage: changes [SUBJECT [SUBJECT]] [after=SEQ] [limit=N]\n"))
        #expect(changes.contains("after=SEQ shows the changes after change SEQ (a page's next, or an export's seq)"))
        #expect(changes.hasSuffix("example: changes after=120 limit=20"))
        let export = HelpText.command(try spec("export"), style: .plain)
        #expect(export.hasPrefix("usage: export [history] [to FILE] [limit=N]\n"))
        #expect(export.contains(#"  The first line is {"export":{"seq":E,"time":T},"entitlements":{...}}"#))
        #expect(export.contains("failed export leaves no file, and an existing FILE is replaced only then."))
        #expect(export.contains("the change feed continues after it, with changes after=E."))
        #expect(export.hasSuffix("example: export history to entitled-export.jsonl"))
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
            "check", "grant", "claim", "revoke", "extend", "event", "show", "customer", "history", "define", "undefine", "erase", "catalog",
            "watch", "unwatch", "changes", "export", "webhooks", "snapshot", "stats", "reload", "ping", "raw", "help", "quit", "exit",
        ])
    }
}
