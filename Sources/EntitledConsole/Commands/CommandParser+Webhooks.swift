/// The parse function of `webhooks`.
extension CommandParser {
    /// `webhooks`, `webhooks NAME`, `webhooks resume NAME`, `webhooks redeliver NAME ID`. The actions are
    /// recognized without regard to case, before names: an endpoint named `resume` or `redeliver` is
    /// listed by `webhooks` but cannot be shown alone (`webhooks resume` asks for a NAME).
    static func webhooks(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        try arguments.rejectUnknownOptions()
        let words = arguments.takeRest()
        guard let first = words.first else { return .webhooks(.list) }
        let command: WebhookCommand
        switch first.lowercased() {
        case "resume":
            guard words.count >= 2 else { throw arguments.failure("resume needs the endpoint's NAME, such as webhooks resume crm") }
            guard words.count == 2 else { throw arguments.failure("unexpected '\(words[2])'") }
            command = .resume(endpoint: words[1])
        case "redeliver":
            guard words.count >= 3 else {
                throw arguments.failure("redeliver needs the endpoint's NAME and the message's ID (webhooks NAME lists the given-up ones)")
            }
            guard words.count == 3 else { throw arguments.failure("unexpected '\(words[3])'") }
            command = .redeliver(endpoint: words[1], message: words[2])
        default:
            guard words.count == 1 else { throw arguments.failure("unexpected '\(words[1])'; webhooks takes a NAME, resume NAME or redeliver NAME ID") }
            command = .show(endpoint: first)
        }
        return .webhooks(command)
    }
}
