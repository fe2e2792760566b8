import EntitledClient

/// Turns the words of a console command into what the console does: a protocol request, `help`, `quit`.
///
/// Pure functions of the text; nothing here talks to the server. The server still validates every
/// value (identifier lengths, times, sources) and its error is shown as it gives it; the parser checks the
/// shape of the command, so a person learns about a misplaced word before anything is sent.
public enum CommandParser {
    /// Parses a line as typed in the console or read from a script.
    public static func parse(line: String) throws(ConsoleUsageError) -> ParsedCommand? {
        let trimmed = line.drop { $0.isWhitespace }
        // `raw` takes the rest of the line exactly as typed, quotes and spacing included.
        let commandWord = trimmed.prefix { !$0.isWhitespace }
        if commandWord.lowercased() == "raw" {
            let json = trimmed.dropFirst(commandWord.count).drop { $0.isWhitespace }
            return try parse(words: ["raw", String(json)])
        }
        let words = try CommandWords.split(line)
        return try parse(words: words)
    }

    /// Parses words already split (a one-shot command's arguments, as the shell split them).
    /// Returns `nil` for no words.
    public static func parse(words: [String]) throws(ConsoleUsageError) -> ParsedCommand? {
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
            try arguments.rejectUnknownOptions()
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
                    expiresAt: expiresAt, duration: duration
                )
            )
        case "claim":
            let subject = try arguments.takeSubject()
            guard let device = subject.device, let user = subject.user else {
                throw arguments.failure("claim needs both device:ID and user:ID")
            }
            try arguments.finish()
            return .request(command: "claim", .claim(device: device, user: user))
        case "revoke":
            guard let membership = arguments.takePositional() else {
                throw arguments.failure("a MEMBERSHIP id is required (show lists them)")
            }
            let reason = arguments.takeRest()
            return .request(command: "revoke", .revoke(membership: membership, reason: reason.isEmpty ? nil : reason.joined(separator: " ")))
        case "show":
            let subject = try arguments.takeSubject()
            let at = try arguments.takeTime(key: "at")
            try arguments.finish()
            return .request(command: "show", .memberships(user: subject.user, device: subject.device, at: at))
        case "define":
            guard let entitlement = arguments.takePositional() else {
                throw arguments.failure("an ENTITLEMENT name is required")
            }
            return .request(command: "define", .define(entitlement: entitlement, products: arguments.takeRest()))
        case "catalog", "snapshot", "ping":
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
        guard user != nil || device != nil else { throw failure("a SUBJECT is required: user:ID, device:ID or both") }
        words = remaining
        return (user, device)
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

    /// Fails on a `key=value` word no `takeValue` took: an option this command does not have.
    func rejectUnknownOptions() throws(ConsoleUsageError) {
        if let stray = words.first(where: Self.isKeyValue) { throw failure("unknown option '\(stray)'") }
    }

    /// Takes every word left, in order.
    mutating func takeRest() -> [String] {
        defer { words = [] }
        return words
    }

    /// Fails when words are left over.
    func finish() throws(ConsoleUsageError) {
        guard let extra = words.first else { return }
        if Self.isKeyValue(extra) { throw failure("unknown option '\(extra)'") }
        throw failure("unexpected '\(extra)'")
    }

    private static func isKeyValue(_ word: String) -> Bool {
        guard let equals = word.firstIndex(of: "=") else { return false }
        return word[..<equals].allSatisfy { $0.isLetter } && equals != word.startIndex
    }
}
