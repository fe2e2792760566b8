import EntitledClient

/// The parse functions of the change feed's commands: changes, export.
extension CommandParser {
    /// `changes [SUBJECT [SUBJECT]] [after=SEQ] [limit=N]`: one page of the feed.
    static func changes(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeOptionalSubject()
        let options = try arguments.takeOptions()
        try arguments.finish()
        var afterSeq: UInt64 = 0
        if let after = options[.after] {
            // `after=` is a membership id or a cursor for the other listings; here it is a change number,
            // which the console checks so a pasted cursor is named as such rather than refused by the server.
            guard after.allSatisfy({ $0.isASCII && $0.isNumber }), let number = UInt64(after) else {
                throw arguments.failure("after= of changes is a change number (a page's next, an export's seq), not '\(after)'")
            }
            afterSeq = number
        }
        var request = EntitledRequest.changes(afterSeq: afterSeq, limit: options.count(.limit))
        // The subject, in the fields the protocol names (`user`, `device`), after the client's own.
        for (key, value) in [("user", subject?.user), ("device", subject?.device)] {
            if let value { request.fields.append((key, .string(value))) }
        }
        return arguments.request(request)
    }

    /// `export [history] [to FILE] [limit=N]`: the words in any order, each at most once.
    static func export(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        var plan = ExportPlan(limit: options.count(.limit))
        while let word = arguments.takePositional() {
            switch word.lowercased() {
            case "history":
                guard !plan.includesHistory else { throw arguments.failure("history is given twice") }
                plan.includesHistory = true
            case "to":
                guard plan.file == nil else { throw arguments.failure("to FILE is given twice") }
                guard let file = arguments.takePositional(), !file.isEmpty else {
                    throw arguments.failure("to needs a FILE, such as to entitled-export.jsonl")
                }
                plan.file = file
            default:
                throw arguments.failure("unexpected '\(word)'; export takes history, to FILE and limit=N")
            }
        }
        try arguments.finish()
        return .export(plan)
    }
}
