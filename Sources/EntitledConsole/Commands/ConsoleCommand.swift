/// The console's commands, in the order `help` lists them.
///
/// The one list of names: the parser's table (`CommandParser.parser(for:)`) and the specs (`spec`, and
/// through them `help`, the suggestions and the completion of command names) key on it. A new command is
/// a case here, its `CommandSpec` and its parse function; the two switches are exhaustive, so the
/// compiler points at both places until they have it.
public enum ConsoleCommand: String, CaseIterable, Sendable {
    // Each is defined in the files of its group: Reads (check, show, customer, history), Memberships
    // (grant, claim, revoke, extend, event, erase), Catalog (define, undefine, catalog), Feed (changes,
    // export), Webhooks (webhooks, which speaks to entitled-stores, not to the server) and Admin (the
    // rest), as `CommandSpec+<Group>.swift` and `CommandParser+<Group>.swift`.
    case check, grant, claim, revoke, extend, event, show, customer, history, define, undefine, erase, catalog
    case watch, unwatch, changes, export, webhooks, snapshot, stats, reload, ping, raw, help, quit, exit

    /// The command a typed word names, compared without regard to case.
    public init?(word: String) {
        self.init(rawValue: word.lowercased())
    }

    /// Its syntax, summary and options, as `help` shows them.
    public var spec: CommandSpec {
        switch self {
        case .check: .check
        case .grant: .grant
        case .claim: .claim
        case .revoke: .revoke
        case .extend: .extend
        case .event: .event
        case .show: .show
        case .customer: .customer
        case .history: .history
        case .define: .define
        case .undefine: .undefine
        case .erase: .erase
        case .catalog: .catalog
        case .watch: .watch
        case .unwatch: .unwatch
        case .changes: .changes
        case .export: .export
        case .webhooks: .webhooks
        case .snapshot: .snapshot
        case .stats: .stats
        case .reload: .reload
        case .ping: .ping
        case .raw: .raw
        case .help: .help
        case .quit: .quit
        case .exit: .exit
        }
    }
}
