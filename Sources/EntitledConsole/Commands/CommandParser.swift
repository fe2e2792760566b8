/// Turns the words of a console command into what the console does: a protocol request, `help`, `quit`.
///
/// Pure functions of the text; nothing here talks to the server. The server still validates every
/// value (identifier lengths, times, sources) and its error is shown as it gives it; the parser checks the
/// shape of the command, so a person learns about a misplaced word before anything is sent.
///
/// Each command has its own parse function, in `CommandParser+<Group>.swift`, found through the table
/// `parser(for:)`; the words they share (subjects, `key=value` options) are read by `ArgumentList`.
public enum CommandParser {
    /// Parses a line as typed in the console or read from a script.
    /// - Parameter now: the current time in milliseconds since the Unix epoch, for the commands whose
    ///   time defaults to now (`event`).
    public static func parse(line: String, now: Int64 = ConsoleTime.nowMilliseconds()) throws(ConsoleUsageError) -> ParsedCommand? {
        let trimmed = line.drop { $0.isWhitespace }
        // `raw` takes the rest of the line exactly as typed, quotes and spacing included.
        let commandWord = trimmed.prefix { !$0.isWhitespace }
        if ConsoleCommand(word: String(commandWord)) == .raw {
            let json = trimmed.dropFirst(commandWord.count).drop { $0.isWhitespace }
            return try parse(words: [String(commandWord), String(json)], now: now)
        }
        let words = try CommandWords.split(line)
        return try parse(words: words, now: now)
    }

    /// Parses words already split (a one-shot command's arguments, as the shell split them).
    /// Returns `nil` for no words.
    public static func parse(words: [String], now: Int64 = ConsoleTime.nowMilliseconds()) throws(ConsoleUsageError) -> ParsedCommand? {
        guard let first = words.first else { return nil }
        guard let command = ConsoleCommand(word: first) else {
            throw .unknownCommand(first, suggestions: CommandSuggestions.closest(to: first))
        }
        var arguments = ArgumentList(spec: command.spec, words: Array(words.dropFirst()), now: now)
        return try parser(for: command)(&arguments)
    }

    /// Reads one command's arguments, consuming them, into what the console does.
    typealias Parse = (inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand

    /// The table: each command's parse function. Commands that read the same words share one (`watch`
    /// and `unwatch`; the operations without arguments).
    static func parser(for command: ConsoleCommand) -> Parse {
        switch command {
        case .check: check
        case .show: show
        case .customer: customer
        case .history: history
        case .grant: grant
        case .claim: claim
        case .revoke: revoke
        case .extend: extend
        case .event: event
        case .erase: erase
        case .define: define
        case .undefine: undefine
        case .watch, .unwatch: watch
        case .changes: changes
        case .export: export
        case .webhooks: webhooks
        case .catalog, .snapshot, .ping, .stats, .reload: operation
        case .raw: raw
        case .help: help
        case .quit, .exit: quit
        }
    }
}
