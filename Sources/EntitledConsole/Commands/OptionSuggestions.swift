/// What to say about a `key=value` word a command does not take: the option meant, when one of the
/// command's own is close, or which options the command has.
enum OptionSuggestions {
    /// Every option key some command takes.
    static let allKeys: Set<String> = Set(CommandSpec.all.flatMap(\.options))

    /// The error for `key=` given to `spec`'s command, which does not take it.
    static func error(for key: String, of spec: CommandSpec) -> ConsoleUsageError {
        let lowered = key.lowercased()
        // An option of another command is a known word in the wrong place: say so rather than guess a
        // spelling (`at=` in a grant is not a typo of `key=`).
        if allKeys.contains(lowered) { return .unusedOption(spec, option: lowered) }
        return .unknownOption(spec, option: key, suggestion: closest(to: lowered, in: spec.options))
    }

    /// The option of `options` closest to `key`: within two edits (one for keys of three letters or
    /// fewer, where two edits reach almost anything), or one the key starts, or that starts with it.
    static func closest(to key: String, in options: [String]) -> String? {
        let limit = key.count <= 3 ? 1 : 2
        let scored = options.compactMap { option -> (option: String, distance: Int)? in
            let distance = CommandSuggestions.editDistance(key, option)
            let isPrefix = key.count >= 2 && (option.hasPrefix(key) || key.hasPrefix(option))
            guard distance <= limit || isPrefix else { return nil }
            return (option, isPrefix ? min(distance, 1) : distance)
        }
        return scored.min { ($0.distance, $0.option) < ($1.distance, $1.option) }?.option
    }
}
