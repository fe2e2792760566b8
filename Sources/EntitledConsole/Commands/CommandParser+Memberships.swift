import EntitledClient

/// The parse functions of the commands that create, move, change and remove memberships: grant, claim,
/// revoke, extend, event, erase.
extension CommandParser {
    static func grant(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeSubject()
        let options = try arguments.takeOptions()
        if options[.original] != nil && options[.transaction] == nil {
            throw arguments.failure("original= needs transaction=: the original transaction of which transaction")
        }
        guard let product = arguments.takePositional() else { throw arguments.failure("a PRODUCT is required") }
        var duration: String?
        var expiresAt: String?
        if let term = arguments.takePositional() {
            switch term.lowercased() {
            case "lifetime": break
            case "until": expiresAt = try takeUntilTime(&arguments)
            default:
                try refuseAmbiguousDuration(term, arguments)
                guard ConsoleTime.looksLikeDuration(term) else {
                    throw arguments.failure("'\(term)' is not a duration (30d, 12h, 2w, 1mo, 1y), until TIME or lifetime")
                }
                duration = term
            }
        }
        try arguments.finish()
        return arguments.request(
            .grant(
                user: subject.user, device: subject.device, product: product, plan: options[.plan], source: options[.source],
                expiresAt: expiresAt, duration: duration, willRenew: options.flag(.renews), periodType: options[.period],
                environment: options[.env], ownership: options[.ownership], grantType: options[.type],
                transactionId: options[.transaction], originalTransactionId: options[.original], idempotencyKey: options[.key],
                reason: options[.reason]
            )
        )
    }

    static func claim(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeSubject()
        guard let device = subject.device, let user = subject.user else {
            throw arguments.failure("claim needs both device:ID and user:ID")
        }
        let options = try arguments.takeOptions()
        try arguments.finish()
        return arguments.request(.claim(device: device, user: user, reason: options[.reason]))
    }

    static func revoke(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        guard let membership = arguments.takePositional() else {
            throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
        }
        let words = arguments.takeRest()
        if options[.reason] != nil && !words.isEmpty { throw arguments.failure("give the REASON as words or as reason=TEXT, not both") }
        let reason = options[.reason] ?? (words.isEmpty ? nil : words.joined(separator: " "))
        return arguments.request(.revoke(membership: membership, reason: reason))
    }

    /// `extend MEMBERSHIP DURATION|TIME [REASON...]`: the term is the word after the id (a TIME may follow
    /// `until`, as in `grant`), and the reason the words after it, as `revoke` takes them.
    static func extend(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        guard let membership = arguments.takePositional() else {
            throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
        }
        guard let term = arguments.takePositional() else {
            throw arguments.failure("a DURATION (such as 1mo) or a TIME (such as 2027-01-01) is required: how much later, or the new expiry")
        }
        var duration: String?
        var expiresAt: String?
        if term.lowercased() == "until" {
            expiresAt = try takeUntilTime(&arguments)
        } else if ConsoleTime.looksLikeTime(term) {
            expiresAt = ConsoleTime.requestTime(from: term)
        } else {
            try refuseAmbiguousDuration(term, arguments)
            guard ConsoleTime.looksLikeDuration(term) else {
                throw arguments.failure("'\(term)' is not a DURATION (7d, 12h, 2w, 1mo, 1y) or a TIME (2027-01-01, 2027-01-01T09:00:00Z)")
            }
            duration = term
        }
        let words = arguments.takeRest()
        if options[.reason] != nil && !words.isEmpty { throw arguments.failure("give the REASON as words or as reason=TEXT, not both") }
        let reason = options[.reason] ?? (words.isEmpty ? nil : words.joined(separator: " "))
        return arguments.request(.extend(membership: membership, duration: duration, expiresAt: expiresAt, reason: reason))
    }

    static func event(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        guard let membership = arguments.takePositional() else {
            throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
        }
        guard let type = arguments.takePositional() else {
            throw arguments.failure("an event TYPE is required: \(CommandSpec.eventTypes.joined(separator: ", "))")
        }
        // A type this console does not know goes to the server, which judges it: a newer server may
        // have more types.
        let eventType = type.lowercased()
        guard let eventID = options[.id] else {
            throw arguments.failure("id=EVENT is required: the store's id of the event, so that a repeated one is ignored")
        }
        var expiresAt: String?
        if let word = arguments.takePositional() {
            guard word.lowercased() == "until" else { throw arguments.failure("unexpected '\(word)'") }
            expiresAt = try takeUntilTime(&arguments)
        }
        try arguments.finish()
        let (grace, product) = (options[.grace], options[.product])
        if let problem = EventArguments.problem(type: eventType, until: expiresAt != nil, grace: grace != nil, product: product != nil) {
            throw arguments.failure(problem)
        }
        return arguments.request(
            .event(
                membership: membership, type: eventType, eventId: eventID,
                eventTime: options[.at] ?? ProtocolTime.string(milliseconds: arguments.now, alwaysWithMilliseconds: true),
                expiresAt: expiresAt, gracePeriodExpiresAt: grace, product: product, transactionId: options[.transaction],
                reason: options[.reason]
            )
        )
    }

    static func erase(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let subject = try arguments.takeSubject()
        let options = try arguments.takeOptions()
        try arguments.finish()
        return arguments.request(.erase(user: subject.user, device: subject.device, reason: options[.reason]))
    }
}
