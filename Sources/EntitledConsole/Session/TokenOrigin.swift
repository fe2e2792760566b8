/// Where the console's token came from. Messages about a refused token name it, so the person knows
/// which of the three to fix; none of them ever shows the token itself.
public enum TokenOrigin: Sendable, Hashable {
    /// `--token TOKEN` on the command line.
    case option
    /// The first line of the file given with `--token-file`.
    case file(path: String)
    /// The `ENTITLED_TOKEN` environment variable.
    case environment

    /// The origin as it reads in a sentence: `the token from ENTITLED_TOKEN`.
    public var phrase: String {
        switch self {
        case .option: "--token"
        case .file(let path): "the token file \(path)"
        case .environment: "ENTITLED_TOKEN"
        }
    }
}
