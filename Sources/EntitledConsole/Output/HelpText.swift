/// The text of `help` and `help COMMAND`.
public enum HelpText {
    /// Every command with its one-line summary.
    public static func overview(style: TextStyle) -> String {
        let commands = CommandSpec.all.filter { $0.name != "exit" }
        let width = commands.map(\.name.count).max() ?? 0
        var lines = ["Commands (SUBJECT is user:ID or device:ID):"]
        for spec in commands {
            lines.append("  " + style.bold(spec.name) + String(repeating: " ", count: width - spec.name.count + 2) + spec.summary)
        }
        lines.append("Type help COMMAND for its syntax and an example. Tab completes; Ctrl-R searches the history.")
        return lines.joined(separator: "\n")
    }

    /// One command's usage line, summary, details and example.
    public static func command(_ spec: CommandSpec, style: TextStyle) -> String {
        var lines = ["usage: " + style.bold(spec.usage), spec.summary]
        lines += spec.details.map { "  " + $0 }
        if let example = spec.example { lines.append("example: " + example) }
        return lines.joined(separator: "\n")
    }
}
