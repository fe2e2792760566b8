/// A command line the console cannot turn into a request: the person typed something it does not
/// understand. Nothing was sent to the server.
public enum ConsoleUsageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first word names no command; `suggestions` are the closest command names.
    case unknownCommand(String, suggestions: [String])
    /// The command exists but its arguments are wrong; the usage line comes with the message.
    case badArguments(CommandSpec, reason: String)
    /// A quote was opened and never closed.
    case unterminatedQuote
    /// A `key=value` word whose key no command takes; `suggestion` is the command's option closest to it.
    case unknownOption(CommandSpec, option: String, suggestion: String?)
    /// A `key=value` word whose key is another command's option.
    case unusedOption(CommandSpec, option: String)
    /// A command that removes or takes back data, run where nobody can be asked (a script, a one-shot
    /// command) without `--yes`.
    case confirmationRequired(CommandSpec)
    /// `check SUBJECT NAME` where NAME is an entitlement of the catalog and not a product; `correction`
    /// is the command spelt right.
    case entitlementGivenAsProduct(String, correction: String)

    public var code: String {
        switch self {
        case .unknownCommand: "unknown_command"
        case .badArguments: "bad_arguments"
        case .unterminatedQuote: "unterminated_quote"
        case .unknownOption: "unknown_option"
        case .unusedOption: "unused_option"
        case .confirmationRequired: "confirmation_required"
        case .entitlementGivenAsProduct: "entitlement_given_as_product"
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
        case .unknownOption(let spec, let option, let suggestion?):
            "unknown option \"\(option)=\" for \(spec.name) (did you mean \"\(suggestion)=\"?)"
        case .unknownOption(let spec, let option, nil):
            "unknown option \"\(option)=\" for \(spec.name); \(Self.optionList(of: spec))"
        case .unusedOption(let spec, let option):
            "\(spec.name) does not use \"\(option)=\"; \(Self.optionList(of: spec))"
        case .confirmationRequired(let spec):
            "\(spec.name) needs confirmation, and there is nobody to ask here: run it as entitlectl --yes \(spec.name) ... "
                + "(nothing was sent)"
        case .entitlementGivenAsProduct(let name, let correction):
            "\(name) is an entitlement, not a product: \(correction)"
        }
    }

    public var description: String { message }

    /// `its options are at=` or `it takes no options`.
    private static func optionList(of spec: CommandSpec) -> String {
        spec.options.isEmpty ? "it takes no options" : "its options are " + spec.options.map { $0 + "=" }.joined(separator: ", ")
    }
}
