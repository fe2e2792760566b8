import EntitledConfiguration

extension SettingTable {
    /// `entitled-stores`' settings: the command line, the environment (`ENTITLED_STORES_LISTEN`) and the
    /// configuration file may give each of them, as `entitled`'s table does for the server. Kept beside
    /// `ServeCommand`'s options, in the order it declares them; `StoresSettingsTests` compares it with the
    /// options `entitled-stores serve --help` lists. Not `config`: a file naming another file would make the
    /// precedence a puzzle.
    static let stores: SettingTable = {
        let keys: [(String, SettingKey.Kind)] = [
            ("listen", .text), ("entitled", .text), ("token-file", .text), ("apple-root-ca", .text), ("apple-bundle-id", .text),
            ("apple-app-id", .integer), ("apple-key-file", .text), ("apple-key-id", .text), ("apple-issuer-id", .text),
            ("apple-api-url", .text), ("apple-sandbox-api-url", .text), ("google-package", .text), ("google-service-account", .text), ("google-push-audience", .text),
            ("google-push-email", .text), ("google-api-url", .text), ("google-token-url", .text), ("google-certs-url", .text),
            ("stripe-secret", .secrets), ("stripe-user-key", .text), ("stripe-grace-days", .integer), ("stripe-api-key-file", .text), ("purchases-token-file", .text), ("stripe-api-url", .text), ("whop-secret", .secrets),
            ("whop-user-key", .text), ("state-dir", .text), ("unmatched-retry-seconds", .integer), ("reconcile-interval-hours", .integer),
            ("reconcile-window-days", .integer), ("idle-timeout", .integer),
            ("request-timeout", .integer), ("max-connections", .integer), ("log-level", .text), ("webhooks", .text),
        ]
        return SettingTable(
            keys: keys.map { SettingKey(name: $0.0, kind: $0.1) }, keyPrefix: "entitled-stores", keyWording: "long option names",
            fileExample: #"{"listen": "127.0.0.1:7118"}"#
        )
    }()
}
