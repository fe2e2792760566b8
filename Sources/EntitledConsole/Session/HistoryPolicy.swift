import EntitledClient

/// Which lines the console may write to its history file. The file outlives the session and is read by
/// whoever can read the home directory, so a line that carries a secret never goes there, and neither
/// does a person the server has erased.
public enum HistoryPolicy {
    /// Whether `line` may be remembered: not blank, not carrying a token (an `auth` request, a `token`
    /// field or option, in any case, or the session's own `token` anywhere in it), and not an erasure
    /// (the `erase` command, or a `raw` request with `"op":"erase"`).
    ///
    /// - Parameter token: the token the console authenticates with, if any. A line containing it is
    ///   kept out even when nothing else marks it: a token pasted at the prompt by mistake is the likely
    ///   way for it to be typed.
    public static func shouldRecord(_ line: String, token: String? = nil) -> Bool {
        if let token, !token.isEmpty, line.contains(token) { return false }
        let lowered = line.lowercased()
        guard !lowered.allSatisfy(\.isWhitespace) else { return false }
        if lowered.contains("token") { return false }
        let firstWord = lowered.drop { $0.isWhitespace }.prefix { !$0.isWhitespace }
        // An erasure names the person it removes: kept, it would bring them back to the history that the
        // erasure (once it succeeds) is cleaned of. `auth` is no console command, but a protocol line
        // typed at the prompt by habit: it carries a token.
        if firstWord == "auth" || ConsoleCommand(word: String(firstWord)) == .erase { return false }
        if lowered.contains("\"auth\"") { return false }
        return !lowered.filter { !$0.isWhitespace }.contains(#""op":"erase""#)
    }

    /// Whether `line` names one of `ids` (a user or device the server has just erased): such a line is
    /// taken out of the history. Identifiers are opaque, so an id counts wherever it appears, even inside
    /// a longer word, as typed or JSON-escaped (in a `raw` line): a line too many is forgotten rather than
    /// a trace of the person kept.
    public static func line(_ line: String, names ids: [String]) -> Bool {
        ids.contains { id in
            guard !id.isEmpty else { return false }
            if line.contains(id) { return true }
            let escaped = String(JSONValue.string(id).jsonText.dropFirst().dropLast())
            return escaped != id && line.contains(escaped)
        }
    }
}
