/// A command line the console cannot turn into a request: the person typed something it does not
/// understand. Nothing was sent to the server.
public enum ConsoleUsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first word names no command; `suggestions` are the closest command names.
    case unknownCommand(String, suggestions: [String])
    /// The command exists but its arguments are wrong; the usage line comes with the message.
    case badArguments(CommandSpec, reason: String)
    /// A quote was opened and never closed.
    case unterminatedQuote

    public var code: String {
        switch self {
        case .unknownCommand: "unknown_command"
        case .badArguments: "bad_arguments"
        case .unterminatedQuote: "unterminated_quote"
        }
    }

    /// What went wrong and what to type instead, one or two lines.
    public var message: String {
        switch self {
        case .unknownCommand(let name, let suggestions):
            switch suggestions.count {
            case 0: "unknown command '\(name)'; type help for the list of commands"
            case 1: "unknown command '\(name)'; did you mean \(suggestions[0])?"
            default:
                "unknown command '\(name)'; did you mean \(suggestions.dropLast().joined(separator: ", ")) or \(suggestions.last!)?"
            }
        case .badArguments(let spec, let reason): "\(reason)\nusage: \(spec.usage)"
        case .unterminatedQuote: "a quote is not closed"
        }
    }

    public var description: String { message }
}
