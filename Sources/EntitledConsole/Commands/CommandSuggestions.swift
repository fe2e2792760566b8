/// The commands closest to a mistyped name, for "did you mean ...?".
public enum CommandSuggestions {
    /// Command names within two edits of `word` (or starting with it), closest first, at most three.
    public static func closest(to word: String) -> [String] {
        let typed = word.lowercased()
        let scored = ConsoleCommand.allCases.compactMap { command -> (name: String, distance: Int)? in
            let name = command.rawValue
            let distance = editDistance(typed, name)
            let isPrefix = typed.count >= 2 && name.hasPrefix(typed)
            guard distance <= 2 || isPrefix else { return nil }
            return (name, isPrefix ? min(distance, 1) : distance)
        }
        return scored.sorted { ($0.distance, $0.name) < ($1.distance, $1.name) }.prefix(3).map(\.name)
    }

    /// Levenshtein distance with adjacent transpositions counted as one edit ("grnat" is one from "grant").
    /// Not EntitledCore's `NameSuggestion`: the client side links none of the server's modules.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
