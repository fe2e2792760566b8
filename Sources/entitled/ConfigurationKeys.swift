/// One setting of `entitled` that the configuration file and the environment may give: a long flag name of
/// the command line without its dashes (`data-dir`), and whether it is a flag or takes a value.
///
/// `all` is the one table of these settings. It is kept by hand beside `EntitledCommand`'s options, and
/// `ConfigurationFileTests` compares it with the options `entitled --help` lists, so an option added
/// without its key here fails the tests.
struct ConfigurationKey: Sendable, Hashable {
    /// Whether the option stands alone (`--no-tcp`) or takes a value (`--port 7117`).
    enum Kind: Sendable, Hashable {
        /// `true` in the file (or `true`/`1` in the environment) gives the flag; `false` leaves it unset.
        case flag
        /// A string or a number in the file, any text in the environment; the command line's parser checks it.
        case value
    }

    /// The long flag name without its dashes, as written in the file: `data-dir`.
    let name: String
    let kind: Kind

    /// The option as written on the command line: `--data-dir`.
    var option: String { "--" + name }

    /// The environment variable that gives it: `ENTITLED_DATA_DIR`.
    var environmentVariable: String {
        EnvironmentOverrides.prefix + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// Every setting, in the order `EntitledCommand` declares them (the order of the synthesized arguments).
    /// Not `config`: a file naming another file would make the precedence a puzzle.
    static let all: [ConfigurationKey] = [
        .init(name: "host", kind: .value),
        .init(name: "port", kind: .value),
        .init(name: "no-tcp", kind: .flag),
        .init(name: "socket", kind: .value),
        .init(name: "data-dir", kind: .value),
        .init(name: "fsync", kind: .value),
        .init(name: "snapshot-interval", kind: .value),
        .init(name: "max-line-length", kind: .value),
        .init(name: "event-loops", kind: .value),
        .init(name: "busy-poll", kind: .value),
        .init(name: "log-level", kind: .value),
        .init(name: "log-format", kind: .value),
        .init(name: "max-connections", kind: .value),
        .init(name: "idle-timeout", kind: .value),
        .init(name: "max-requests-per-turn", kind: .value),
        .init(name: "shutdown-timeout", kind: .value),
        .init(name: "tls-cert", kind: .value),
        .init(name: "tls-key", kind: .value),
        .init(name: "auth", kind: .value),
        .init(name: "insecure-no-auth", kind: .flag),
        .init(name: "socket-mode", kind: .value),
        .init(name: "metrics-port", kind: .value),
        .init(name: "metrics-host", kind: .value),
    ]

    /// The setting of this name, if there is one.
    static func named(_ name: String) -> ConfigurationKey? {
        all.first { $0.name == name }
    }

    /// The known name closest to a mistyped one (at most two letters off), for "did you mean".
    static func closest(to name: String) -> ConfigurationKey? {
        let scored = all.map { (key: $0, distance: editDistance($0.name, name)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }), best.distance <= 2 else { return nil }
        return best.key
    }

    /// Levenshtein distance over characters: the edits from one name to the other.
    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            previous = current
        }
        return previous[b.count]
    }
}
