import EntitledConfiguration

extension SettingTable {
    /// `entitled`'s settings: the configuration file and the environment (`ENTITLED_DATA_DIR`) may give each
    /// of them. Kept by hand beside `EntitledCommand`'s options, in the order it declares them, and
    /// `ConfigurationFileTests` compares it with the options `entitled --help` lists, so an option added
    /// without its key here fails the tests. Not `config`: a file naming another file would make the
    /// precedence a puzzle.
    static let entitled = SettingTable(
        keys: [
            .init(name: "host", kind: .text),
            .init(name: "port", kind: .integer),
            .init(name: "no-tcp", kind: .flag),
            .init(name: "socket", kind: .text),
            .init(name: "data-dir", kind: .text),
            .init(name: "fsync", kind: .text),
            .init(name: "transfer-rule", kind: .text),
            .init(name: "unsynced-reads", kind: .text),
            .init(name: "snapshot-interval", kind: .integer),
            .init(name: "max-line-length", kind: .integer),
            .init(name: "event-loops", kind: .integer),
            .init(name: "busy-poll", kind: .integer),
            .init(name: "log-level", kind: .text),
            .init(name: "log-format", kind: .text),
            .init(name: "max-connections", kind: .integer),
            .init(name: "idle-timeout", kind: .number),
            .init(name: "auth-timeout", kind: .number),
            .init(name: "max-requests-per-turn", kind: .integer),
            .init(name: "max-watches", kind: .integer),
            .init(name: "shutdown-timeout", kind: .number),
            .init(name: "min-seq-wait", kind: .integer),
            .init(name: "tls-cert", kind: .text),
            .init(name: "tls-key", kind: .text),
            .init(name: "auth", kind: .text),
            .init(name: "insecure-no-auth", kind: .flag),
            .init(name: "no-io-uring", kind: .flag),
            .init(name: "socket-mode", kind: .text),
            .init(name: "metrics-port", kind: .integer),
            .init(name: "metrics-host", kind: .text),
            .init(name: "postgres", kind: .text),
            .init(name: "node-name", kind: .text),
            .init(name: "write-timeout", kind: .number),
            .init(name: "change-retention", kind: .integer),
            .init(name: "feed-retention", kind: .text),
            .init(name: "feed-retention-changes", kind: .integer),
        ],
        keyPrefix: "entitled",
        keyWording: "long flag names",
        fileExample: #"{"port": 7117}"#,
        // Passed on to `entitled` by accident of a shared environment: `entitlectl`'s token, the binary the
        // Python client's tests start, and `entitled-stores`' own settings.
        foreignVariables: ["ENTITLED_TOKEN", "ENTITLED_BINARY"],
        foreignPrefixes: ["ENTITLED_STORES_"]
    )
}
