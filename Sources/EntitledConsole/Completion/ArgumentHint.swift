/// The argument synopsis shown while a command is typed (libedit has no hints API; the console shows it
/// as a right prompt).
public enum ArgumentHint {
    /// The arguments of the command the line starts with, once its name is complete and followed by a
    /// space; `nil` while the name is still being typed, for an unknown command and for one without
    /// arguments.
    public static func hint(forLine line: String) -> String? {
        let trimmed = line.drop { $0.isWhitespace }
        let commandWord = trimmed.prefix { !$0.isWhitespace }
        guard commandWord.count < trimmed.count, let spec = CommandSpec.named(String(commandWord)),
            !spec.arguments.isEmpty
        else { return nil }
        return spec.arguments
    }
}
