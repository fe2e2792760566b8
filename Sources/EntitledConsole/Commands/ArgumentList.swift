import EntitledClient

/// The arguments of one command, consumed as its parse function recognizes them; what is left at the end
/// is an error.
struct ArgumentList {
    let spec: CommandSpec
    /// The current time in milliseconds since the Unix epoch, for the commands whose time defaults to now.
    let now: Int64
    private var words: [String]

    init(spec: CommandSpec, words: [String], now: Int64) {
        self.spec = spec
        self.words = words
        self.now = now
    }

    /// The line, understood: `request` sent for this command, whose name decides how the answer is shown.
    func request(_ request: EntitledRequest) -> ParsedCommand {
        .request(command: spec.command, request)
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

    /// Takes every option the command's spec lists, in the spec's order, each read by its kind, and then
    /// refuses any other `key=value` word: a command sees only options it declared.
    mutating func takeOptions() throws(ConsoleUsageError) -> CommandOptions {
        var options = CommandOptions()
        for option in spec.acceptedOptions {
            options.set(option, try takeValue(of: option))
        }
        try rejectUnknownOptions()
        return options
    }

    /// Takes `option=VALUE`, when given (once at most), and reads it by the option's kind.
    private mutating func takeValue(of option: ConsoleOption) throws(ConsoleUsageError) -> CommandOptions.Value? {
        let key = option.rawValue
        let prefix = key + "="
        let matches = words.indices.filter { words[$0].lowercased().hasPrefix(prefix) }
        guard let index = matches.first else { return nil }
        guard matches.count == 1 else { throw failure("\(key)= is given twice") }
        let text = String(words[index].dropFirst(prefix.count))
        guard !text.isEmpty else { throw failure("\(key)= needs a value") }
        words.remove(at: index)
        switch option.kind {
        case .text:
            return .text(text)
        case .time:
            return .text(ConsoleTime.requestTime(from: text))
        case .count:
            guard text.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(text) else {
                throw failure("\(key)= needs a whole number, not '\(text)'")
            }
            return .count(count)
        case .flag:
            switch text.lowercased() {
            case "yes", "true": return .flag(true)
            case "no", "false": return .flag(false)
            default: throw failure("\(key)= needs yes or no, not '\(text)'")
            }
        }
    }

    /// Takes the next word that is not `key=value`; `nil` when there is none.
    mutating func takePositional() -> String? {
        guard let index = words.firstIndex(where: { !Self.isKeyValue($0) }) else { return nil }
        return words.remove(at: index)
    }

    /// Fails on a `key=value` word no option took: an option this command does not have, named with the
    /// closest one it does have. Nothing is sent: a misspelt option must never change what a command
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
