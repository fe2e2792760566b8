/// Watching, the server's admin operations and the console's own commands: watch, unwatch, snapshot,
/// stats, reload, ping, raw, help, quit, exit.
extension CommandSpec {
    static let watch = CommandSpec(
        .watch,
        arguments: "SUBJECT [SUBJECT] | all",
        summary: "Show each change of a subject's access (or everyone's) as the server pushes it.",
        details: subjectDetails + [
            "In the console, each change is shown as it arrives, above the prompt, even while a command is typed.",
            "As a one-shot command (entitlectl watch user:u1) it keeps printing them until interrupted.",
            "Watches last as long as the connection: after a reconnect, watch again.",
        ],
        example: "watch user:u1"
    )

    static let unwatch = CommandSpec(
        .unwatch,
        arguments: "[SUBJECT [SUBJECT] | all]",
        summary: "Stop watching a subject (or everyone); with nothing, stop every watch.",
        example: "unwatch user:u1"
    )

    static let snapshot = CommandSpec(
        .snapshot,
        summary: "Write a snapshot of the whole state to the server's data directory now.",
        details: ["Checks and writes go on meanwhile; the log the snapshot covers is then removed."]
    )

    static let stats = CommandSpec(
        .stats,
        summary: "Show the server's counters: requests, errors, latency, connections, store size, log and snapshot.",
        details: ["Counted since the server started; an admin token is needed when the server requires authentication."]
    )

    static let reload = CommandSpec(
        .reload,
        summary: "Have the server re-read its auth file (--auth), as SIGHUP does.",
        details: [
            "New tokens work at once; connections of removed tokens lose their role. A broken file changes nothing.",
            "An admin token is needed.",
        ]
    )

    static let ping = CommandSpec(.ping, summary: "Check that the server answers.")

    static let raw = CommandSpec(
        .raw,
        arguments: "JSON",
        summary: "Send one protocol line as it is and print the server's response line.",
        details: ["The protocol is specified in Protocol/PROTOCOL.md."],
        example: #"raw {"op":"check","user":"u1","product":"prod_pro"}"#
    )

    static let help = CommandSpec(
        .help, arguments: "[COMMAND]", summary: "List the commands, or show one command's syntax and an example.", example: "help grant"
    )

    static let quit = CommandSpec(.quit, summary: "Leave the console (also exit, or Ctrl-D).")

    static let exit = CommandSpec(.exit, summary: "Leave the console.")
}
