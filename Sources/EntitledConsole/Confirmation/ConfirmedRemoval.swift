/// A console command that removes or takes back data: interactively it shows what it will touch and asks
/// first (`ConfirmationPreview`); scripts and one-shot commands must say `--yes` (`ConfirmationPolicy`).
public enum ConfirmedRemoval: Sendable, Hashable {
    case revoke, undefine, erase

    /// The removal `command` is, or `nil` for a command that removes nothing. Exhaustive, so that a new
    /// command is decided on here.
    public init?(_ command: ConsoleCommand) {
        switch command {
        case .revoke: self = .revoke
        case .undefine: self = .undefine
        case .erase: self = .erase
        case .check, .grant, .claim, .extend, .event, .show, .customer, .history, .define, .catalog, .watch, .unwatch, .changes,
            .export, .webhooks, .snapshot, .stats, .reload, .ping, .raw, .help, .quit, .exit:
            return nil
        }
    }

    /// The console command, as typed.
    public var command: ConsoleCommand {
        switch self {
        case .revoke: .revoke
        case .undefine: .undefine
        case .erase: .erase
        }
    }
}
