import EntitledClient
import EntitledConsole

/// The token the console authenticates with, and where it came from.
struct ConsoleToken {
    let value: String
    let origin: TokenOrigin

    /// The token of `--token`, else of `--token-file`, else of `ENTITLED_TOKEN`; `nil` when none is
    /// given. (Both options at once are refused before this, by `EntitlectlCommand.validate`.)
    static func resolve(option: String?, file: String?, environment: Environment) throws(TokenFile.Failure) -> ConsoleToken? {
        if let option { return ConsoleToken(value: option, origin: .option) }
        if let file { return ConsoleToken(value: try TokenFile.readToken(atPath: file), origin: .file(path: file)) }
        // An empty variable (`ENTITLED_TOKEN=` in a unit file, a `$(cat ...)` of a missing file) counts as
        // unset: an empty token can only be refused, and the hint for a missing token is the better help.
        if let variable = environment["ENTITLED_TOKEN"], !variable.isEmpty {
            return ConsoleToken(value: variable, origin: .environment)
        }
        return nil
    }
}
