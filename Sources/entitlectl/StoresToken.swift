import EntitledClient
/// The admin token of entitled-stores' webhook routes (the webhooks file's `admin-token-file`), and
/// where it came from. It is never taken from the command line, where `ps` shows it to everyone.
struct StoresToken {
    let value: String
    /// As it reads in a sentence: `the token file /etc/x`, `ENTITLECTL_STORES_TOKEN`.
    let origin: String

    /// The token of `--stores-token-file`, else of `ENTITLECTL_STORES_TOKEN`; `nil` when neither is given.
    static func resolve(file: String?, environment: Environment) throws(TokenFile.Failure) -> StoresToken? {
        if let file { return StoresToken(value: try TokenFile.readToken(atPath: file), origin: "the token file \(file)") }
        // Empty counts as unset, as ENTITLED_TOKEN's does: the missing-token message is the better help.
        if let variable = environment["ENTITLECTL_STORES_TOKEN"], !variable.isEmpty {
            return StoresToken(value: variable, origin: "ENTITLECTL_STORES_TOKEN")
        }
        return nil
    }
}
