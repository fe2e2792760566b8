/// Splits a console line into words the way a shell would, simply: whitespace separates words, and
/// single or double quotes keep spaces inside one word (`revoke mem_x "customer asked"`). In double
/// quotes a backslash escapes the next character.
public enum CommandWords {
    /// The words of a complete line.
    public static func split(_ line: String) throws(ConsoleUsageError) -> [String] {
        let scan = scan(line)
        guard !scan.openQuote else { throw .unterminatedQuote }
        return scan.words
    }

    /// The words of a line still being typed: every finished word, and the one the cursor is in (empty
    /// when the line ends in whitespace). An open quote is accepted: completion happens mid-word.
    public static func splitForCompletion(_ line: String) -> (finished: [String], current: String) {
        let scan = scan(line)
        if scan.endsInWordBreak { return (scan.words, "") }
        return (Array(scan.words.dropLast()), scan.words.last ?? "")
    }

    private struct Scan {
        var words: [String] = []
        var openQuote = false
        var endsInWordBreak = true
    }

    private static func scan(_ line: String) -> Scan {
        var result = Scan()
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\" && open == "\"" {
                    escaped = true
                } else {
                    current.append(character)
                }
                continue
            }
            if character.isWhitespace {
                if inWord {
                    result.words.append(current)
                    current = ""
                    inWord = false
                }
                continue
            }
            inWord = true
            if character == "\"" || character == "'" {
                quote = character
            } else {
                current.append(character)
            }
        }
        if inWord { result.words.append(current) }
        result.openQuote = quote != nil
        result.endsInWordBreak = !inWord
        return result
    }
}
