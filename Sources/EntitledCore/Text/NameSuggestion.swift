/// The known name a mistyped one most likely meant, for the "did you mean ...?" of the server's messages:
/// a request's unknown field, a configuration file's unknown key, an unknown environment variable.
///
/// One implementation for the server's modules. The console (`EntitledConsole`) keeps its own, since the
/// client side links none of the server's modules.
public enum NameSuggestion {
    /// Names longer than this (in Unicode scalars) get no suggestion: the distance costs the product of
    /// the two lengths, and no name it could mean is anywhere near this long.
    public static let longestName = 64

    /// The first of `candidates` whose name (`nameOf`) is closest to `name`, if that is within
    /// `allowedDistance(length of the candidate's name)` edits. Compared without case, by `editDistance`, so
    /// that `entitlment`, `duraton`, `expires_at` and `ID` all find theirs.
    public static func closest<Candidates: Sequence>(
        to name: String, among candidates: Candidates, by nameOf: (Candidates.Element) -> String,
        within allowedDistance: (_ candidateLength: Int) -> Int
    ) -> Candidates.Element? {
        let typed = Array(name.lowercased().unicodeScalars)
        guard typed.count <= longestName else { return nil }
        var found: (candidate: Candidates.Element, distance: Int)?
        for candidate in candidates {
            let known = Array(nameOf(candidate).lowercased().unicodeScalars)
            let distance = editDistance(typed, known)
            if distance <= allowedDistance(known.count), distance < (found?.distance ?? .max) { found = (candidate, distance) }
        }
        return found?.candidate
    }

    /// The edits (a letter inserted, removed or replaced, or two neighbours swapped) that turn `a` into
    /// `b`, over Unicode scalars and with case: Levenshtein distance counting a swap as one edit (optimal
    /// string alignment), since a swap is the commonest slip of the keyboard (`usre` is one from `user`).
    public static func editDistance(_ a: String, _ b: String) -> Int {
        editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
    }

    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            let beforePrevious = previousRow
            previousRow = row
            row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], beforePrevious[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }
}
