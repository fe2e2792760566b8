import EntitledClient

/// What the console knows about one of its commands: its syntax, a one-line summary and an example,
/// which `help`, the usage line of an error and the argument hint all show.
public struct CommandSpec: Sendable, Hashable {
    /// The command word, lower case.
    public let name: String
    /// The arguments, in the notation of the usage line (`SUBJECT [SUBJECT] PRODUCT ...`); empty for none.
    public let arguments: String
    public let summary: String
    /// More lines for `help COMMAND`: what the arguments mean.
    public let details: [String]
    public let example: String?
    /// The `key=` options the command takes (keys without `=`); any other `key=value` word is refused.
    public var options: [String] = []
    /// Whether the command removes or takes back data: interactively it shows what it will touch and asks
    /// first; scripts and one-shot commands must say `--yes`.
    public var needsConfirmation = false

    /// `grant SUBJECT [SUBJECT] PRODUCT ...`: the usage line.
    public var usage: String { arguments.isEmpty ? name : "\(name) \(arguments)" }
}

extension CommandSpec {
    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = [
        CommandSpec(
            name: "check",
            arguments: "SUBJECT [SUBJECT] [PRODUCT | entitlement:NAME] [at=TIME]",
            summary: "Is access active now (or at TIME)? Any product, one product or one entitlement.",
            details: subjectDetails + [
                "PRODUCT counts only that product; entitlement:NAME only the products the catalog gives NAME.",
                "at=TIME evaluates expiry at TIME, an RFC 3339 time or a date (2027-01-01 is midnight UTC).",
            ],
            example: "check user:u1 entitlement:pro",
            options: ["at"]
        ),
        CommandSpec(
            name: "grant",
            arguments: "SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]",
            summary: "Create a membership of PRODUCT for a user, a device (a guest purchase) or both.",
            details: subjectDetails + [
                "DURATION is a whole number and a unit s, m, h, d or w (30d, 12h, 2w); until TIME ends it at TIME.",
                "Without either, or with lifetime, it never expires.",
                "SOURCE is one of \(sources.joined(separator: ", ")); the default is manual.",
                "More options, for store purchases (each defaults to the first value listed):",
                "  renews=no|yes  the store will renew it at its expiry",
                "  period=\(periodTypes.joined(separator: "|"))  env=\(environments.joined(separator: "|"))",
                "  ownership=\(ownerships.joined(separator: "|"))  type=\(grantTypes.joined(separator: "|"))",
                "  transaction=ID  original=ID  the store's transaction and original transaction ids",
                "  key=KEY  an idempotency key: the same grant again with it creates nothing new",
                "  reason=TEXT  kept in the history (quote it when it has spaces: reason=\"gift for a tester\")",
            ],
            example: "grant device:d1 prod_pro 30d source=app_store",
            options: ["source", "plan", "renews", "period", "env", "ownership", "type", "transaction", "original", "key", "reason"]
        ),
        CommandSpec(
            name: "claim",
            arguments: "device:ID user:ID [reason=TEXT]",
            summary: "A user logs in on a device: the device's guest memberships become the user's.",
            details: [
                "Memberships already claimed by a user stay where they are; a repeated claim moves nothing.",
                "reason=TEXT is kept in the history.",
            ],
            example: "claim device:d1 user:u1",
            options: ["reason"]
        ),
        CommandSpec(
            name: "revoke",
            arguments: "MEMBERSHIP [REASON...]",
            summary: "Take a membership back (refund, chargeback, manual); it stays listed as revoked.",
            details: [
                "REASON is free text (the words after the id, reason=TEXT, or one quoted string); the default is manual.",
                "Interactively it shows the membership and asks first; scripts and one-shot commands need --yes.",
            ],
            example: "revoke mem_1ymr6jcw5jqzv refund",
            options: ["reason"], needsConfirmation: true
        ),
        CommandSpec(
            name: "event",
            arguments: "MEMBERSHIP TYPE id=EVENT [at=TIME] [until TIME] [grace=TIME] [product=PRODUCT] [transaction=ID] [reason=TEXT]",
            summary: "Apply a store's event to a membership: a renewal, a cancellation, a billing issue, a refund...",
            details: [
                "TYPE is one of \(eventTypes.joined(separator: ", ")).",
                "id=EVENT is the store's id of the event: the same id again is ignored as a duplicate.",
                "at=TIME is when the event happened (default: now); one older than the last applied is ignored.",
                "until TIME is the new expiry: required for renewal and extension, optional for resume.",
                "grace=TIME ends a billing_issue's grace period; product=PRODUCT is a product_change's new product.",
                "transaction=ID is the store's transaction; reason=TEXT is kept in the history.",
            ],
            example: "event mem_1ymr6jcw5jqzv renewal id=evt_1 until 2027-01-22",
            options: ["id", "at", "grace", "product", "transaction", "reason"]
        ),
        CommandSpec(
            name: "show",
            arguments: "SUBJECT [SUBJECT] [at=TIME] | transaction=ID | original=ID [limit=N] [after=ID]",
            summary: "List the memberships a subject can see, or those of a store transaction, newest first, as a table.",
            details: subjectDetails + [
                "at=TIME computes each status at TIME instead of now.",
                "transaction=ID lists the memberships holding the store's transaction ID (a purchase or a renewal);",
                "original=ID those of the subscription that transaction ID started (its originalTransactionId).",
                "limit=N shows at most N memberships, from 1 to 1000; the server's default is 100.",
                "When more follow, a more: line under the table gives the command for the next page (after=ID).",
            ],
            example: "show user:u1 device:d1",
            options: ["at", "transaction", "original", "limit", "after"]
        ),
        CommandSpec(
            name: "customer",
            arguments: "SUBJECT [SUBJECT]",
            summary: "Show what a subject is entitled to, entitlement by entitlement (RevenueCat's CustomerInfo).",
            details: subjectDetails + ["Each entitlement shows the membership that gives it, then the products and dates."],
            example: "customer user:u1"
        ),
        CommandSpec(
            name: "history",
            arguments: "SUBJECT [SUBJECT] | entitlement:NAME [limit=N] [after=CURSOR]",
            summary: "Show the audit trail of a subject's memberships or of an entitlement, newest first.",
            details: subjectDetails + [
                "entitlement:NAME shows how the catalog defined NAME over time instead.",
                "limit=N shows at most N entries, from 1 to 1000; the server's default is 100.",
                "When more follow, a more: line under the table gives the command for the next page (after=CURSOR).",
            ],
            example: "history user:u1 limit=20",
            options: ["limit", "after"]
        ),
        CommandSpec(
            name: "define",
            arguments: "ENTITLEMENT PRODUCT... [reason=TEXT]",
            summary: "Set the products that unlock an entitlement, replacing the ones it had.",
            details: ["At least one PRODUCT; undefine removes an entitlement.", "reason=TEXT is kept in the history."],
            example: "define pro prod_pro_m prod_pro_y",
            options: ["reason"]
        ),
        CommandSpec(
            name: "undefine",
            arguments: "ENTITLEMENT [reason=TEXT]",
            summary: "Remove an entitlement from the catalog: no product unlocks it any more.",
            details: [
                "Memberships stay as they are; checks of entitlement:NAME answer not active for everyone.",
                "reason=TEXT is kept in the history.",
                "Interactively it shows the entitlement and its products and asks first; scripts and one-shot commands need --yes.",
            ],
            example: "undefine pro reason=\"replaced by premium\"",
            options: ["reason"], needsConfirmation: true
        ),
        CommandSpec(
            name: "erase",
            arguments: "SUBJECT [SUBJECT] [reason=TEXT]",
            summary: "Erase a person (right to be forgotten): every membership, device link and history entry naming them.",
            details: subjectDetails + [
                "It cannot be undone. The history keeps that an erasure happened, without the id; reason=TEXT goes with it.",
                "Interactively it shows the memberships it will remove and asks first; scripts and one-shot commands need --yes.",
            ],
            example: "erase user:u1 reason=\"request 2026-118\"",
            options: ["reason"], needsConfirmation: true
        ),
        CommandSpec(
            name: "catalog", arguments: "", summary: "List every entitlement and the products that unlock it.",
            details: [], example: nil
        ),
        CommandSpec(
            name: "watch",
            arguments: "SUBJECT [SUBJECT] | all",
            summary: "Show each change of a subject's access (or everyone's) as the server pushes it.",
            details: subjectDetails + [
                "In the console, each change is shown as it arrives, above the prompt, even while a command is typed.",
                "As a one-shot command (entitlectl watch user:u1) it keeps printing them until interrupted.",
                "Watches last as long as the connection: after a reconnect, watch again.",
            ],
            example: "watch user:u1"
        ),
        CommandSpec(
            name: "unwatch",
            arguments: "[SUBJECT [SUBJECT] | all]",
            summary: "Stop watching a subject (or everyone); with nothing, stop every watch.",
            details: [],
            example: "unwatch user:u1"
        ),
        CommandSpec(
            name: "snapshot", arguments: "",
            summary: "Write a snapshot of the whole state to the server's data directory now.",
            details: ["Checks and writes go on meanwhile; the log the snapshot covers is then removed."],
            example: nil
        ),
        CommandSpec(
            name: "stats", arguments: "",
            summary: "Show the server's counters: requests, errors, latency, connections, store size, log and snapshot.",
            details: ["Counted since the server started; an admin token is needed when the server requires authentication."],
            example: nil
        ),
        CommandSpec(
            name: "reload", arguments: "",
            summary: "Have the server re-read its auth file (--auth), as SIGHUP does.",
            details: [
                "New tokens work at once; connections of removed tokens lose their role. A broken file changes nothing.",
                "An admin token is needed.",
            ],
            example: nil
        ),
        CommandSpec(name: "ping", arguments: "", summary: "Check that the server answers.", details: [], example: nil),
        CommandSpec(
            name: "raw",
            arguments: "JSON",
            summary: "Send one protocol line as it is and print the server's response line.",
            details: ["The protocol is specified in Protocol/PROTOCOL.md."],
            example: #"raw {"op":"check","user":"u1","product":"prod_pro"}"#
        ),
        CommandSpec(
            name: "help", arguments: "[COMMAND]", summary: "List the commands, or show one command's syntax and an example.",
            details: [], example: "help grant"
        ),
        CommandSpec(name: "quit", arguments: "", summary: "Leave the console (also exit, or Ctrl-D).", details: [], example: nil),
        CommandSpec(name: "exit", arguments: "", summary: "Leave the console.", details: [], example: nil),
    ]

    /// The purchase sources the protocol accepts.
    public static let sources = EntitledRequest.Names.sources
    /// The values of `grant`'s options, the first being the server's default.
    public static let periodTypes = EntitledRequest.Names.periodTypes
    public static let environments = EntitledRequest.Names.environments
    public static let ownerships = EntitledRequest.Names.ownerships
    public static let grantTypes = EntitledRequest.Names.grantTypes
    /// The `TYPE`s of `event`.
    public static let eventTypes = EntitledRequest.Names.eventTypes

    static let subjectDetails = [
        "SUBJECT is user:ID or device:ID; give both for a logged-in user on a device.",
    ]

    /// The command named `name`, compared without regard to case.
    public static func named(_ name: String) -> CommandSpec? {
        let lowered = name.lowercased()
        return all.first { $0.name == lowered }
    }
}
