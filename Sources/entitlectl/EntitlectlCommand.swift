import ArgumentParser
import EntitledClient
import EntitledConsole

#if canImport(Glibc)
import Glibc
#endif

/// `entitlectl`: the admin console of `entitled`.
@main
struct EntitlectlCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlectl",
        abstract: "The admin console of entitled: look up, grant, move and take back entitlements.",
        discussion: """
            With a COMMAND, runs it and exits: status 0 when the server answered ok, 1 on an error response, \
            2 on a usage or connection error. Without one, reads commands: interactively with line editing, \
            history and Tab completion when standard input is a terminal, or line by line from a script \
            otherwise, stopping at the first failure unless --continue. Type help for the commands.

            Options come before the COMMAND. History is kept in ~/.entitlectl_history \
            (ENTITLECTL_HISTFILE overrides the path; /dev/null turns it off); lines carrying a token are never \
            written to it.
            """,
        version: "0.1.0"
    )

    @Option(help: "The server's TCP host.")
    var host = "127.0.0.1"

    @Option(help: "The server's TCP port.")
    var port = 7117

    @Option(name: .customLong("socket"), help: "Connect to this Unix domain socket instead of TCP.")
    var socketPath: String?

    @Option(help: "Authenticate with this token (default: the ENTITLED_TOKEN environment variable, which keeps it out of ps).")
    var token: String?

    @Option(help: "Seconds to wait for a connection and for each response.")
    var timeout: Double = 10

    @Flag(help: "Print the server's JSON response lines as they are.")
    var json = false

    @Flag(name: .customLong("continue"), help: "In a script, go on after a command fails (the exit status is still the worst seen).")
    var continueAfterFailure = false

    @Flag(name: .customLong("no-color"), help: "Never color the output (it is colored only on a terminal, and never when NO_COLOR is set).")
    var noColor = false

    @Argument(parsing: .captureForPassthrough, help: "A command and its arguments, such as: check user:u1 entitlement:pro")
    var command: [String] = []

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be between 1 and 65535, not \(port)") }
        guard timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be more than 0 and at most 86400 seconds, not \(timeout)")
        }
    }

    var address: ServerAddress {
        socketPath.map(ServerAddress.unixSocket(path:)) ?? .tcp(host: host, port: port)
    }

    /// Runs the console and returns its exit status.
    func runConsole() -> Int32 {
        let environment = Environment()
        let connection = EntitledConnection(address: address, timeout: timeout, token: token ?? environment["ENTITLED_TOKEN"])
        let colored = !noColor && environment["NO_COLOR"] == nil && isatty(STDOUT_FILENO) == 1
        let session = ConsoleSession(
            connection: connection, printsJSON: json, style: TextStyle(usesColor: colored),
            standardOutput: { StandardStreams.output($0 + "\n") },
            standardError: { StandardStreams.error($0 + "\n") }
        )
        if !command.isEmpty {
            return session.runOneShot(words: command).exitStatus
        }
        if isatty(STDIN_FILENO) == 1 {
            return InteractiveConsole(session: session, historyPath: environment.historyPath).run()
        }
        return ScriptRunner(session: session, continueAfterFailure: continueAfterFailure).run()
    }

    /// Parses the command line, mapping its errors to exit status 2 (ArgumentParser's own is 64), so the
    /// exit statuses stay 0, 1 and 2 as documented.
    static func main() {
        let parsed: EntitlectlCommand
        do {
            parsed = try parse()
        } catch {
            let status = exitCode(for: error)
            if status == .success {
                StandardStreams.output(fullMessage(for: error) + "\n")
                Glibc.exit(0)
            }
            StandardStreams.error(fullMessage(for: error) + "\nRun entitlectl --help for the options.\n")
            Glibc.exit(2)
        }
        // The command words are captured as they are (a reason or a raw line may contain anything), which
        // also captures options written where the command would start: answer those here.
        if let first = parsed.command.first, first.hasPrefix("-") {
            switch first {
            case "-h", "--help", "-help":
                StandardStreams.output(helpMessage() + "\n")
                Glibc.exit(0)
            case "--version":
                StandardStreams.output(configuration.version + "\n")
                Glibc.exit(0)
            default:
                StandardStreams.error("error: unknown option '\(first)'\nRun entitlectl --help for the options.\n")
                Glibc.exit(2)
            }
        }
        Glibc.exit(parsed.runConsole())
    }
}
