import EntitledClient

/// A console line, understood: what the console will do with it.
public enum ParsedCommand: Sendable, Hashable {
    /// Send `request` to the server; `command` is the console command, which decides how the response is
    /// shown and whether it is confirmed first.
    case request(command: ConsoleCommand, EntitledRequest)
    /// Read a whole export, page after page on one connection, and write it as JSON lines.
    case export(ExportPlan)
    /// Ask entitled-stores (not the server) about its webhook endpoints, or have it resume one or
    /// redeliver a message.
    case webhooks(WebhookCommand)
    /// Send a protocol line exactly as typed (`raw`).
    case raw(String)
    /// Show the list of commands, or one command's syntax.
    case help(topic: String?)
    /// Leave the console.
    case quit
}
