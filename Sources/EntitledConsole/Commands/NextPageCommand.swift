import EntitledClient

/// The console command that shows the page after one: `show`, `history` or `changes` as the person would
/// type it, rebuilt from the request of the page shown, with `after=` the answer's `next`.
///
/// `memberships` and `history` answer at most `limit` items (100 unless asked); an answer with more to
/// come carries `next`, and the console prints this command under the table (`more: show user:u1
/// after=mem_x`), so the operator can copy it, or edit its limit, to go on. A page of `changes` always
/// has a `next` (a change number): the page after it is there at once while `next` is below `newest`.
public enum NextPageCommand {
    /// `show user:u1 limit=20 after=mem_x`: the command of `request` (the request of console command
    /// `command`) for the page after `next` (for `changes`, the change number as text); `nil` for a
    /// command whose answers do not come in pages.
    public static func text(command: ConsoleCommand, request: EntitledRequest, next: String) -> String? {
        var words = [command.rawValue]
        switch command {
        case .show:
            words += subjectWords(request)
            if let transaction = request.string("transactionId") { words.append("transaction=" + quoted(transaction)) }
            if let original = request.string("originalTransactionId") { words.append("original=" + quoted(original)) }
            if let at = request.string("at") { words.append("at=" + quoted(at)) }
        case .history:
            words += subjectWords(request)
            if let entitlement = request.string("entitlement") { words.append("entitlement:" + quoted(entitlement)) }
        case .changes:
            words += subjectWords(request)
        case .check, .grant, .claim, .revoke, .extend, .event, .customer, .define, .undefine, .erase, .catalog, .watch, .unwatch,
            .export, .webhooks, .snapshot, .stats, .reload, .ping, .raw, .help, .quit, .exit:
            return nil
        }
        if case .number(let limit)? = request.fields.last(where: { $0.key == "limit" })?.value { words.append("limit=" + limit) }
        words.append("after=" + quoted(next))
        return words.joined(separator: " ")
    }

    /// `user:ID` and `device:ID`, as the person would type the request's subject.
    private static func subjectWords(_ request: EntitledRequest) -> [String] {
        [request.string("user").map { "user:" + quoted($0) }, request.string("device").map { "device:" + quoted($0) }].compactMap { $0 }
    }

    /// `value` as one console word: as it is when `CommandWords` would read it back so, else in double
    /// quotes with `"` and `\` escaped (an id with a space or a quote in it).
    static func quoted(_ value: String) -> String {
        guard value.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" }) || value.isEmpty else { return value }
        var text = "\""
        for character in value {
            if character == "\"" || character == "\\" { text.append("\\") }
            text.append(character)
        }
        return text + "\""
    }
}
