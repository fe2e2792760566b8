import EntitledClient

/// Turns the words of a console command into what the console does: a protocol request, `help`, `quit`.
///
/// Pure functions of the text; nothing here talks to the server. The server still validates every
/// value (identifier lengths, times, sources) and its error is shown as it gives it; the parser checks the
/// shape of the command, so a person learns about a misplaced word before anything is sent.
public enum CommandParser {
    /// Parses a line as typed in the console or read from a script.
    /// - Parameter now: the current time in milliseconds since the Unix epoch, for the commands whose
    ///   time defaults to now (`event`).
    public static func parse(line: String, now: Int64 = ConsoleTime.nowMilliseconds()) throws(ConsoleUsageError) -> ParsedCommand? {
        let trimmed = line.drop { $0.isWhitespace }
        // `raw` takes the rest of the line exactly as typed, quotes and spacing included.
        let commandWord = trimmed.prefix { !$0.isWhitespace }
        if commandWord.lowercased() == "raw" {
            let json = trimmed.dropFirst(commandWord.count).drop { $0.isWhitespace }
            return try parse(words: ["raw", String(json)], now: now)
        }
        let words = try CommandWords.split(line)
        return try parse(words: words, now: now)
    }

    /// Parses words already split (a one-shot command's arguments, as the shell split them).
    /// Returns `nil` for no words.
    public static func parse(words: [String], now: Int64 = ConsoleTime.nowMilliseconds()) throws(ConsoleUsageError) -> ParsedCommand? {
        guard let first = words.first else { return nil }
        guard let spec = CommandSpec.named(first) else {
            throw .unknownCommand(first, suggestions: CommandSuggestions.closest(to: first))
        }
        var arguments = ArgumentList(spec: spec, words: Array(words.dropFirst()))
        switch spec.name {
        case "check":
            let subject = try arguments.takeSubject()
            let at = try arguments.takeTime(key: "at")
            try arguments.rejectUnknownOptions()
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
            return .request(
                command: "check",
                .check(user: subject.user, device: subject.device, product: product, entitlement: entitlement, at: at)
            )
        case "grant":
            let subject = try arguments.takeSubject()
            let source = try arguments.takeValue(key: "source")
            let plan = try arguments.takeValue(key: "plan")
            let renews = try arguments.takeFlag(key: "renews")
            let periodType = try arguments.takeValue(key: "period")
            let environment = try arguments.takeValue(key: "env")
            let ownership = try arguments.takeValue(key: "ownership")
            let grantType = try arguments.takeValue(key: "type")
            let transaction = try arguments.takeValue(key: "transaction")
            let original = try arguments.takeValue(key: "original")
            let key = try arguments.takeValue(key: "key")
            let reason = try arguments.takeValue(key: "reason")
            try arguments.rejectUnknownOptions()
            if original != nil && transaction == nil {
                throw arguments.failure("original= needs transaction=: the original transaction of which transaction")
            }
            guard let product = arguments.takePositional() else { throw arguments.failure("a PRODUCT is required") }
            var duration: String?
            var expiresAt: String?
            if let term = arguments.takePositional() {
                switch term.lowercased() {
                case "lifetime": break
                case "until":
                    guard let time = arguments.takePositional() else {
                        throw arguments.failure("until needs a TIME, such as until 2027-01-01")
                    }
                    expiresAt = ConsoleTime.requestTime(from: time)
                default:
                    guard ConsoleTime.looksLikeDuration(term) else {
                        throw arguments.failure("'\(term)' is not a duration (30d, 12h, 2w), until TIME or lifetime")
                    }
                    duration = term
                }
            }
            try arguments.finish()
            return .request(
                command: "grant",
                .grant(
                    user: subject.user, device: subject.device, product: product, plan: plan, source: source,
                    expiresAt: expiresAt, duration: duration, willRenew: renews, periodType: periodType,
                    environment: environment, ownership: ownership, grantType: grantType, transactionId: transaction,
                    originalTransactionId: original, idempotencyKey: key, reason: reason
                )
            )
        case "claim":
            let subject = try arguments.takeSubject()
            guard let device = subject.device, let user = subject.user else {
                throw arguments.failure("claim needs both device:ID and user:ID")
            }
            let reason = try arguments.takeValue(key: "reason")
            try arguments.finish()
            return .request(command: "claim", .claim(device: device, user: user, reason: reason))
        case "revoke":
            let reasonOption = try arguments.takeValue(key: "reason")
            try arguments.rejectUnknownOptions()
            guard let membership = arguments.takePositional() else {
                throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
            }
            let words = arguments.takeRest()
            if reasonOption != nil && !words.isEmpty { throw arguments.failure("give the REASON as words or as reason=TEXT, not both") }
            let reason = reasonOption ?? (words.isEmpty ? nil : words.joined(separator: " "))
            return .request(command: "revoke", .revoke(membership: membership, reason: reason))
        case "event":
            let eventID = try arguments.takeValue(key: "id")
            let at = try arguments.takeTime(key: "at")
            let grace = try arguments.takeTime(key: "grace")
            let product = try arguments.takeValue(key: "product")
            let transaction = try arguments.takeValue(key: "transaction")
            let reason = try arguments.takeValue(key: "reason")
            try arguments.rejectUnknownOptions()
            guard let membership = arguments.takePositional() else {
                throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
            }
            guard let type = arguments.takePositional() else {
                throw arguments.failure("an event TYPE is required: \(CommandSpec.eventTypes.joined(separator: ", "))")
            }
            // A type this console does not know goes to the server, which judges it: a newer server may
            // have more types.
            let eventType = type.lowercased()
            guard let eventID else {
                throw arguments.failure("id=EVENT is required: the store's id of the event, so that a repeated one is ignored")
            }
            var expiresAt: String?
            if let word = arguments.takePositional() {
                guard word.lowercased() == "until" else { throw arguments.failure("unexpected '\(word)'") }
                guard let time = arguments.takePositional() else {
                    throw arguments.failure("until needs a TIME, such as until 2027-01-01")
                }
                expiresAt = ConsoleTime.requestTime(from: time)
            }
            try arguments.finish()
            if let problem = EventArguments.problem(type: eventType, until: expiresAt != nil, grace: grace != nil, product: product != nil) {
                throw arguments.failure(problem)
            }
            return .request(
                command: "event",
                .event(
                    membership: membership, type: eventType, eventId: eventID,
                    eventTime: at ?? ProtocolTime.string(milliseconds: now, alwaysWithMilliseconds: true), expiresAt: expiresAt,
                    gracePeriodExpiresAt: grace, product: product, transactionId: transaction, reason: reason
                )
            )
        case "show":
            let subject = try arguments.takeOptionalSubject()
            let transaction = try arguments.takeValue(key: "transaction")
            let original = try arguments.takeValue(key: "original")
            let at = try arguments.takeTime(key: "at")
            // A page of the listing: the server judges the limit's range and the cursor.
            let limit = try arguments.takeCount(key: "limit")
            let after = try arguments.takeValue(key: "after")
            try arguments.finish()
            // A transaction's memberships are shown as they are now: the server refuses `at` with one.
            let atWithTransaction = "at=TIME goes with a SUBJECT, not with transaction=ID or original=ID"
            switch (subject, transaction, original) {
            case (let subject?, nil, nil):
                return .request(command: "show", .memberships(user: subject.user, device: subject.device, at: at, limit: limit, after: after))
            case (nil, nil, nil):
                throw arguments.failure("a SUBJECT (user:ID, device:ID or both), transaction=ID or original=ID is required")
            case (nil, let transaction?, nil):
                guard at == nil else { throw arguments.failure(atWithTransaction) }
                return .request(command: "show", .memberships(transactionId: transaction, limit: limit, after: after))
            case (nil, nil, let original?):
                guard at == nil else { throw arguments.failure(atWithTransaction) }
                return .request(command: "show", .memberships(originalTransactionId: original, limit: limit, after: after))
            default:
                throw arguments.failure("give one of a SUBJECT, transaction=ID and original=ID")
            }
        case "customer":
            let subject = try arguments.takeSubject()
            try arguments.finish()
            return .request(command: "customer", .customer(user: subject.user, device: subject.device))
        case "history":
            let subject = try arguments.takeOptionalSubject()
            let entitlement = try arguments.takePrefixed("entitlement:", "entitlement:NAME")
            let limit = try arguments.takeCount(key: "limit")
            let after = try arguments.takeValue(key: "after")
            try arguments.finish()
            switch (subject, entitlement) {
            case (.some, .some):
                throw arguments.failure("give a SUBJECT or entitlement:NAME, not both")
            case (nil, nil):
                throw arguments.failure("a SUBJECT (user:ID, device:ID or both) or entitlement:NAME is required")
            case (let subject?, nil):
                return .request(command: "history", .history(user: subject.user, device: subject.device, limit: limit, after: after))
            case (nil, let entitlement?):
                return .request(command: "history", .history(entitlement: entitlement, limit: limit, after: after))
            }
        case "watch", "unwatch":
            let subject = try arguments.takeOptionalSubject()
            let all = arguments.takeWord("all")
            try arguments.finish()
            switch (subject, all) {
            case (.some, true):
                throw arguments.failure("give a SUBJECT or all, not both")
            case (let subject?, false):
                let request: EntitledRequest =
                    spec.name == "watch"
                    ? .watch(user: subject.user, device: subject.device) : .unwatch(user: subject.user, device: subject.device)
                return .request(command: spec.name, request)
            case (nil, true):
                return .request(command: spec.name, spec.name == "watch" ? .watchAll : .unwatchAll)
            case (nil, false):
                guard spec.name == "unwatch" else { throw arguments.failure("a SUBJECT (user:ID, device:ID or both) or all is required") }
                return .request(command: "unwatch", .unwatch())
            }
        case "define":
            let reason = try arguments.takeValue(key: "reason")
            try arguments.rejectUnknownOptions()
            guard let entitlement = arguments.takePositional() else {
                throw arguments.failure("an ENTITLEMENT name is required")
            }
            let products = arguments.takeRest()
            guard !products.isEmpty else {
                throw arguments.failure("at least one PRODUCT is required; to remove \(entitlement) from the catalog: undefine \(entitlement)")
            }
            return .request(command: "define", .define(entitlement: entitlement, products: products, reason: reason))
        case "undefine":
            let reason = try arguments.takeValue(key: "reason")
            try arguments.rejectUnknownOptions()
            guard let entitlement = arguments.takePositional() else {
                throw arguments.failure("an ENTITLEMENT name is required (catalog lists them)")
            }
            try arguments.finish()
            return .request(command: "undefine", .undefine(entitlement: entitlement, reason: reason))
        case "erase":
            let subject = try arguments.takeSubject()
            let reason = try arguments.takeValue(key: "reason")
            try arguments.finish()
            return .request(command: "erase", .erase(user: subject.user, device: subject.device, reason: reason))
        case "catalog", "snapshot", "ping", "stats", "reload":
            try arguments.finish()
            return .request(command: spec.name, EntitledRequest(op: spec.name))
        case "raw":
            let json = arguments.takeRest().joined(separator: " ")
            guard !json.isEmpty else { throw arguments.failure("raw needs a JSON request line") }
            return .raw(json)
        case "help":
            let topic = arguments.takeRest()
            guard topic.count <= 1 else { throw arguments.failure("help takes at most one command name") }
            return .help(topic: topic.first)
        default:  // quit, exit
            try arguments.finish()
            return .quit
        }
    }
}

/// The arguments of one command, consumed as the parser recognizes them; what is left at the end is an
/// error.
struct ArgumentList {
    let spec: CommandSpec
    private var words: [String]

    init(spec: CommandSpec, words: [String]) {
        self.spec = spec
        self.words = words
    }

    func failure(_ reason: String) -> ConsoleUsageError {
        .badArguments(spec, reason: reason)
    }

    func nonEmpty(_ value: String, _ what: String) throws(ConsoleUsageError) -> String {
        guard !value.isEmpty else { throw failure("\(what) needs a name after the colon") }
        return value
    }

    /// Takes every `user:ID` and `device:ID` word; at least one is required, each at most once.
    mutating func takeSubject() throws(ConsoleUsageError) -> (user: String?, device: String?) {
        guard let subject = try takeOptionalSubject() else {
            throw failure("a SUBJECT is required: user:ID, device:ID or both")
        }
        return subject
    }

    /// Takes every `user:ID` and `device:ID` word, each at most once; `nil` when there is none.
    mutating func takeOptionalSubject() throws(ConsoleUsageError) -> (user: String?, device: String?)? {
        var user: String?
        var device: String?
        var remaining: [String] = []
        for word in words {
            let lowered = word.lowercased()
            if lowered.hasPrefix("user:") {
                guard user == nil else { throw failure("user: is given twice") }
                user = try nonEmpty(String(word.dropFirst(5)), "user:ID")
            } else if lowered.hasPrefix("device:") {
                guard device == nil else { throw failure("device: is given twice") }
                device = try nonEmpty(String(word.dropFirst(7)), "device:ID")
            } else {
                remaining.append(word)
            }
        }
        words = remaining
        guard user != nil || device != nil else { return nil }
        return (user, device)
    }

    /// Takes the word starting with `prefix` (compared without regard to case), and returns what follows
    /// the prefix; `nil` when there is none.
    mutating func takePrefixed(_ prefix: String, _ what: String) throws(ConsoleUsageError) -> String? {
        let matches = words.indices.filter { words[$0].lowercased().hasPrefix(prefix) }
        guard let index = matches.first else { return nil }
        guard matches.count == 1 else { throw failure("\(prefix) is given twice") }
        let value = try nonEmpty(String(words[index].dropFirst(prefix.count)), what)
        words.remove(at: index)
        return value
    }

    /// Takes the word `word` (compared without regard to case) if it is there.
    mutating func takeWord(_ word: String) -> Bool {
        guard let index = words.firstIndex(where: { $0.lowercased() == word }) else { return false }
        words.remove(at: index)
        return true
    }

    /// Takes `key=N`, a whole number, when given.
    mutating func takeCount(key: String) throws(ConsoleUsageError) -> Int? {
        guard let text = try takeValue(key: key) else { return nil }
        guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(text) else {
            throw failure("\(key)= needs a whole number, not '\(text)'")
        }
        return count
    }

    /// Takes `key=yes|no` (also true/false), when given.
    mutating func takeFlag(key: String) throws(ConsoleUsageError) -> Bool? {
        guard let text = try takeValue(key: key) else { return nil }
        switch text.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: throw failure("\(key)= needs yes or no, not '\(text)'")
        }
    }

    /// Takes `key=VALUE`, when given (once at most).
    mutating func takeValue(key: String) throws(ConsoleUsageError) -> String? {
        let prefix = key + "="
        let matches = words.indices.filter { words[$0].lowercased().hasPrefix(prefix) }
        guard let index = matches.first else { return nil }
        guard matches.count == 1 else { throw failure("\(key)= is given twice") }
        let value = String(words[index].dropFirst(prefix.count))
        guard !value.isEmpty else { throw failure("\(key)= needs a value") }
        words.remove(at: index)
        return value
    }

    /// Takes `key=TIME`, turning a bare date into midnight UTC.
    mutating func takeTime(key: String) throws(ConsoleUsageError) -> String? {
        try takeValue(key: key).map(ConsoleTime.requestTime(from:))
    }

    /// Takes the next word that is not `key=value`; `nil` when there is none.
    mutating func takePositional() -> String? {
        guard let index = words.firstIndex(where: { !Self.isKeyValue($0) }) else { return nil }
        return words.remove(at: index)
    }

    /// Fails on a `key=value` word no `takeValue` took: an option this command does not have, named with
    /// the closest one it does have. Nothing is sent: a misspelt option must never change what a command
    /// means (`sorce=stripe` quietly dropped would grant with the default source).
    func rejectUnknownOptions() throws(ConsoleUsageError) {
        guard let stray = words.first(where: Self.isKeyValue) else { return }
        throw OptionSuggestions.error(for: String(stray.prefix { $0 != "=" }), of: spec)
    }

    /// Takes every word left, in order.
    mutating func takeRest() -> [String] {
        defer { words = [] }
        return words
    }

    /// Fails when words are left over.
    func finish() throws(ConsoleUsageError) {
        try rejectUnknownOptions()
        guard let extra = words.first else { return }
        throw failure("unexpected '\(extra)'")
    }

    private static func isKeyValue(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "=") else { return false }
        return word[..<equals].allSatisfy { $0.isLetter } && equals != word.startIndex
    }
}
