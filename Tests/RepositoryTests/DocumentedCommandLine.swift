import Foundation

/// A command line written in a Markdown document, from the program's name on: a line of a fenced code
/// block (its `\` continuations joined) or an inline code span. What a test holds against the program's
/// declared options, so that a README cannot go on naming a flag the tool no longer has.
struct DocumentedCommandLine: Equatable {
    /// The document's line it starts on (1-based).
    let line: Int
    /// The words after the program's name, up to a shell operator or comment: `["checks", "--runs", "5"]`.
    let words: [String]

    /// The long options among `words`, without their `--` and any `=value`: `--entitled-option=--x` is
    /// `entitled-option`.
    var longOptions: [String] {
        words.filter { $0.hasPrefix("--") && $0.count > 2 }.map { String($0.dropFirst(2).prefix { $0 != "=" }) }
    }

    /// Every command line in `markdown` that runs `program`: a word that is `program` or a path ending in
    /// it (`.build/release/entitled-bench`, `Tools/client-bench/bench.py`), with the words after it.
    static func all(running program: String, in markdown: String) -> [DocumentedCommandLine] {
        var found: [DocumentedCommandLine] = []
        var inFence = false
        var continued: (line: Int, text: String)?
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            if inFence {
                let text = (continued?.text ?? "") + " " + line
                let start = continued?.line ?? index + 1
                if text.hasSuffix("\\") {
                    continued = (start, String(text.dropLast()))
                } else {
                    continued = nil
                    found += commandLines(running: program, in: text, line: start)
                }
            } else {
                // Inline code: the odd pieces between backticks.
                let pieces = line.split(separator: "`", omittingEmptySubsequences: false)
                for piece in pieces.enumerated() where piece.offset % 2 == 1 {
                    found += commandLines(running: program, in: String(piece.element), line: index + 1)
                }
            }
        }
        return found
    }

    /// The command lines running `program` in one line of shell: where a command starts (the line's first
    /// word, or one after `;`, `&&`, `|`, `do` ...), past an interpreter or `NAME=value` settings before it,
    /// so that `for product in entitled entitled-bench; do ...` runs `swift`, not `entitled-bench`.
    private static func commandLines(running program: String, in text: String, line: Int) -> [DocumentedCommandLine] {
        let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
        var found: [DocumentedCommandLine] = []
        var atCommandStart = true
        for (index, word) in words.enumerated() {
            if separators.contains(word) || word.hasSuffix(";") {
                atCommandStart = true
            } else if atCommandStart && (word == program || word.hasSuffix("/" + program)) {
                found.append(DocumentedCommandLine(line: line, words: arguments(after: index, in: words)))
                atCommandStart = false
            } else if !(atCommandStart && (prefixes.contains(word) || word.wholeMatch(of: #/[A-Za-z_][A-Za-z0-9_]*=\S*/#) != nil)) {
                atCommandStart = false
            }
        }
        return found
    }

    /// The words of a command, up to the shell operator or comment that ends it.
    private static func arguments(after index: Int, in words: [String]) -> [String] {
        var arguments: [String] = []
        for argument in words[(index + 1)...] {
            if separators.contains(argument) || [">", ">>", "<", "2>&1"].contains(argument) || argument.hasPrefix("#") { break }
            if argument.hasSuffix(";") {
                arguments.append(String(argument.dropLast()))
                break
            }
            arguments.append(argument)
        }
        return arguments
    }

    /// Words after which a new command starts.
    private static let separators: Set<String> = ["|", "||", "&&", ";", "do", "then", "else"]
    /// Words that run the command after them.
    private static let prefixes: Set<String> = ["python3", "python", "sudo", "time", "exec", "nohup", "env"]
}
