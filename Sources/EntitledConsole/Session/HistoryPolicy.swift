/// Which lines the console may write to its history file. The file outlives the session and is read by
/// whoever can read the home directory, so a line that carries a secret never goes there.
public enum HistoryPolicy {
    /// Whether `line` may be remembered: not blank, and not carrying a token (an `auth` request, a
    /// `token` field or option, in any case, or the session's own `token` anywhere in it).
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
        if firstWord == "auth" { return false }
        return !lowered.contains("\"auth\"")
    }
}
