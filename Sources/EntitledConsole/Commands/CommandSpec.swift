import EntitledClient

/// What the console knows about one of its commands: its syntax, a one-line summary and an example,
/// which `help`, the usage line of an error and the argument hint all show.
///
/// Each command's spec is a static constant in `CommandSpec+<Group>.swift`, found through
/// `ConsoleCommand.spec`.
public struct CommandSpec: Sendable, Hashable {
    /// The command this spec describes.
    public let command: ConsoleCommand
    /// The arguments, in the notation of the usage line (`SUBJECT [SUBJECT] PRODUCT ...`); empty for none.
    public let arguments: String
    /// One line: what the command does.
    public let summary: String
    /// More lines for `help COMMAND`: what the arguments mean.
    public let details: [String]
    /// A command line to copy, shown by `help COMMAND`.
    public let example: String?
    /// The `key=` options the command takes, in the order of its usage line; `ArgumentList.takeOptions`
    /// reads these and refuses any other `key=value` word.
    let acceptedOptions: [ConsoleOption]
    init(
        _ command: ConsoleCommand, arguments: String = "", summary: String, details: [String] = [], example: String? = nil,
        options: [ConsoleOption] = []
    ) {
        self.command = command
        self.arguments = arguments
        self.summary = summary
        self.details = details
        self.example = example
        self.acceptedOptions = options
    }

    /// Whether the command removes or takes back data: interactively it shows what it will touch and asks
    /// first; scripts and one-shot commands must say `--yes`.
    public var needsConfirmation: Bool { ConfirmedRemoval(command) != nil }

    /// The command word, lower case.
    public var name: String { command.rawValue }

    /// The option keys the command takes, without `=` (`["at"]`).
    public var options: [String] { acceptedOptions.map(\.rawValue) }

    /// `grant SUBJECT [SUBJECT] PRODUCT ...`: the usage line.
    public var usage: String { arguments.isEmpty ? name : "\(name) \(arguments)" }
}

extension CommandSpec {
    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = ConsoleCommand.allCases.map(\.spec)

    /// The purchase sources the protocol accepts.
    public static let sources = EntitledRequest.Names.sources
    /// The values of `grant`'s options, the first being the server's default.
    public static let periodTypes = EntitledRequest.Names.periodTypes
    public static let environments = EntitledRequest.Names.environments
    public static let ownerships = EntitledRequest.Names.ownerships
    public static let grantTypes = EntitledRequest.Names.grantTypes
    /// The `TYPE`s of `event`.
    public static let eventTypes = EntitledRequest.Names.eventTypes

    static let subjectDetails = [
        "SUBJECT is user:ID or device:ID; give both for a logged-in user on a device.",
    ]

    /// The command named `name`, compared without regard to case.
    public static func named(_ name: String) -> CommandSpec? {
        ConsoleCommand(word: name)?.spec
    }
}
