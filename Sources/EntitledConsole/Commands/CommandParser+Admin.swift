import EntitledClient

/// The parse functions of watching, the server's plain operations and the console's own commands:
/// watch and unwatch, catalog, snapshot, ping, stats, reload, raw, help, quit and exit.
extension CommandParser {
    /// `watch` and `unwatch`, which read the same words.
    static func watch(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeOptionalSubject()
        let all = arguments.takeWord("all")
        try arguments.finish()
        let watching = arguments.spec.command == .watch
        switch (subject, all) {
        case (.some, true):
            throw arguments.failure("give a SUBJECT or all, not both")
        case (let subject?, false):
            return arguments.request(
                watching ? .watch(user: subject.user, device: subject.device) : .unwatch(user: subject.user, device: subject.device)
            )
        case (nil, true):
            return arguments.request(watching ? .watchAll : .unwatchAll)
        case (nil, false):
            guard !watching else { throw arguments.failure("a SUBJECT (user:ID, device:ID or both) or all is required") }
            return arguments.request(.unwatch())
        }
    }

    /// An operation without arguments (catalog, snapshot, ping, stats, reload): the command's name is the
    /// request's `op`.
    static func operation(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        try arguments.finish()
        return arguments.request(EntitledRequest(op: arguments.spec.name))
    }

    static func raw(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let json = arguments.takeRest().joined(separator: " ")
        guard !json.isEmpty else { throw arguments.failure("raw needs a JSON request line") }
        return .raw(json)
    }

    static func help(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let topic = arguments.takeRest()
        guard topic.count <= 1 else { throw arguments.failure("help takes at most one command name") }
        return .help(topic: topic.first)
    }

    /// `quit` and `exit`.
    static func quit(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        try arguments.finish()
        return .quit
    }
}
