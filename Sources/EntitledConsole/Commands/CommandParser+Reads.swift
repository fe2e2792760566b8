import EntitledClient

/// The parse functions of the commands that read memberships and access: check, show, customer, history.
extension CommandParser {
    static func check(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeSubject()
        let options = try arguments.takeOptions()
        var product: String?
        var entitlement: String?
        if let target = arguments.takePositional() {
            if target.lowercased().hasPrefix("entitlement:") {
                entitlement = try arguments.nonEmpty(String(target.dropFirst("entitlement:".count)), "entitlement:NAME")
            } else {
                product = target
            }
        }
        try arguments.finish()
        return arguments.request(
            .check(user: subject.user, device: subject.device, product: product, entitlement: entitlement, at: options[.at])
        )
    }

    static func show(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeOptionalSubject()
        // A page of the listing: the server judges the limit's range and the cursor.
        let options = try arguments.takeOptions()
        try arguments.finish()
        let (at, limit, after) = (options[.at], options.count(.limit), options[.after])
        // A transaction's memberships are shown as they are now: the server refuses `at` with one.
        let atWithTransaction = "at=TIME goes with a SUBJECT, not with transaction=ID or original=ID"
        switch (subject, options[.transaction], options[.original]) {
        case (let subject?, nil, nil):
            return arguments.request(.memberships(user: subject.user, device: subject.device, at: at, limit: limit, after: after))
        case (nil, nil, nil):
            throw arguments.failure("a SUBJECT (user:ID, device:ID or both), transaction=ID or original=ID is required")
        case (nil, let transaction?, nil):
            guard at == nil else { throw arguments.failure(atWithTransaction) }
            return arguments.request(.memberships(transactionId: transaction, limit: limit, after: after))
        case (nil, nil, let original?):
            guard at == nil else { throw arguments.failure(atWithTransaction) }
            return arguments.request(.memberships(originalTransactionId: original, limit: limit, after: after))
        default:
            throw arguments.failure("give one of a SUBJECT, transaction=ID and original=ID")
        }
    }

    static func customer(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeSubject()
        try arguments.finish()
        return arguments.request(.customer(user: subject.user, device: subject.device))
    }

    static func history(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeOptionalSubject()
        let entitlement = try arguments.takePrefixed("entitlement:", "entitlement:NAME")
        let options = try arguments.takeOptions()
        try arguments.finish()
        let (limit, after) = (options.count(.limit), options[.after])
        switch (subject, entitlement) {
        case (.some, .some):
            throw arguments.failure("give a SUBJECT or entitlement:NAME, not both")
        case (nil, nil):
            throw arguments.failure("a SUBJECT (user:ID, device:ID or both) or entitlement:NAME is required")
        case (let subject?, nil):
            return arguments.request(.history(user: subject.user, device: subject.device, limit: limit, after: after))
        case (nil, let entitlement?):
            return arguments.request(.history(entitlement: entitlement, limit: limit, after: after))
        }
    }
}
