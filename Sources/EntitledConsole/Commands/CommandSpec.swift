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
            example: "check user:u1 entitlement:pro"
        ),
        CommandSpec(
            name: "grant",
            arguments: "SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN]",
            summary: "Create a membership of PRODUCT for a user, a device (a guest purchase) or both.",
            details: subjectDetails + [
                "DURATION is a whole number and a unit s, m, h, d or w (30d, 12h, 2w); until TIME ends it at TIME.",
                "Without either, or with lifetime, it never expires.",
                "SOURCE is one of \(sources.joined(separator: ", ")); the default is manual.",
            ],
            example: "grant device:d1 prod_pro 30d source=app_store"
        ),
        CommandSpec(
            name: "claim",
            arguments: "device:ID user:ID",
            summary: "A user logs in on a device: the device's guest memberships become the user's.",
            details: ["Memberships already claimed by a user stay where they are; a repeated claim moves nothing."],
            example: "claim device:d1 user:u1"
        ),
        CommandSpec(
            name: "revoke",
            arguments: "MEMBERSHIP [REASON...]",
            summary: "Take a membership back (refund, chargeback, manual); it stays listed as revoked.",
            details: ["REASON is free text (the words after the id, or one quoted string); the default is manual."],
            example: "revoke mem_1ymr6jcw5jqzv refund"
        ),
        CommandSpec(
            name: "show",
            arguments: "SUBJECT [SUBJECT] [at=TIME]",
            summary: "List the memberships a subject can see, newest first, as a table.",
            details: subjectDetails + ["at=TIME computes each status at TIME instead of now."],
            example: "show user:u1 device:d1"
        ),
        CommandSpec(
            name: "define",
            arguments: "ENTITLEMENT [PRODUCT...]",
            summary: "Set the products that unlock an entitlement, replacing the ones it had.",
            details: ["With no products the entitlement exists and nothing unlocks it."],
            example: "define pro prod_pro_m prod_pro_y"
        ),
        CommandSpec(
            name: "catalog", arguments: "", summary: "List every entitlement and the products that unlock it.",
            details: [], example: nil
        ),
        CommandSpec(
            name: "snapshot", arguments: "",
            summary: "Write a snapshot of the whole state to the server's data directory now.",
            details: ["Checks and writes go on meanwhile; the log the snapshot covers is then removed."],
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
    public static let sources = ["app_store", "play_store", "stripe", "whop", "manual", "promotional"]

    static let subjectDetails = [
        "SUBJECT is user:ID or device:ID; give both for a logged-in user on a device.",
    ]

    /// The command named `name`, compared without regard to case.
    public static func named(_ name: String) -> CommandSpec? {
        let lowered = name.lowercased()
        return all.first { $0.name == lowered }
    }
}
