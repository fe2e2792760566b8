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
        abstract: "The admin console of entitled: look up, grant, extend, move and take back entitlements.",
        discussion: """
            With a COMMAND, runs it and exits: status 0 when the server answered ok, 1 on an error response, \
            2 on a usage or connection error, or when export ... to FILE cannot write its file. revoke, undefine \
            and erase need --yes there (else they are \
            refused with status 2 and nothing is sent). Without one, reads commands: interactively with line editing, \
            history and Tab completion when standard input is a terminal, or line by line from a script \
            otherwise, stopping at the first failure unless --continue. Type help for the commands.

            Options come before the COMMAND. History is kept in ~/.entitlectl_history \
            (ENTITLECTL_HISTFILE overrides the path; /dev/null turns it off); lines carrying a token are never \
            written to it.

            A server started with --auth wants a token: the first of --token, --token-file and the \
            ENTITLED_TOKEN environment variable is sent when connecting, and again on each reconnection. \
            Prefer --token-file or ENTITLED_TOKEN: any user of the machine can read a command line (ps), and \
            although entitlectl overwrites a --token value as soon as it starts, it is visible until then.

            The webhooks command speaks to entitled-stores serve --webhooks at --stores instead, with the admin \
            token of --stores-token-file or the ENTITLECTL_STORES_TOKEN environment variable (never on the \
            command line).
            """,
        version: "0.1.0"
    )

    @Option(help: "The server's TCP host.")
    var host = "127.0.0.1"

    @Option(help: "The server's TCP port.")
    var port = 7117

    @Option(name: .customLong("socket"), help: "Connect to this Unix domain socket instead of TCP.")
    var socketPath: String?

    @Option(
        help: ArgumentHelp(
            "Authenticate with this token. Briefly visible to other users (ps) before entitlectl overwrites it: prefer --token-file or ENTITLED_TOKEN.",
            valueName: "token"
        )
    )
    var token: String?

    @Option(
        help: ArgumentHelp(
            "Authenticate with the token on the first line of this file (surrounding whitespace ignored); it never appears in ps or the environment.",
            valueName: "path"
        )
    )
    var tokenFile: String?

    @Option(help: "Seconds to wait for a connection and for each response, and for a starting server (one answering `loading`).")
    var timeout: Double = 10

    @Flag(help: "Connect over TLS (a server started with --tls-cert), verifying its certificate against the system's roots.")
    var tls = false

    @Option(help: ArgumentHelp("Connect over TLS, trusting the PEM certificates of this file (a private CA, or the server's self-signed certificate).", valueName: "file"))
    var tlsCa: String?

    @Option(help: ArgumentHelp("entitled-stores' address, for the webhooks command.", valueName: "url"))
    var stores = "http://127.0.0.1:7118"

    @Option(
        help: ArgumentHelp(
            "For the webhooks command: the admin token of entitled-stores' webhook routes (the webhooks file's admin-token-file) is the first line of this file; else ENTITLECTL_STORES_TOKEN.",
            valueName: "path"
        )
    )
    var storesTokenFile: String?

    @Flag(help: "Print the server's JSON response lines as they are.")
    var json = false

    @Flag(
        name: [.customLong("yes"), .customShort("y")],
        help: "Run revoke, undefine and erase without asking. Scripts and one-shot commands need it for them; interactively they show what they will touch and ask y/N."
    )
    var yes = false

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
        // Neither message quotes the token: it is a secret, and the person knows what they typed.
        if token != nil && tokenFile != nil {
            throw ValidationError("give the token with --token or with --token-file, not both")
        }
        if token?.isEmpty == true { throw ValidationError("--token must not be empty") }
        if tokenFile?.isEmpty == true { throw ValidationError("--token-file must name a file") }
        if storesTokenFile?.isEmpty == true { throw ValidationError("--stores-token-file must name a file") }
    }

    var address: ServerAddress {
        socketPath.map(ServerAddress.unixSocket(path:)) ?? .tcp(host: host, port: port)
    }

    /// Runs the console and returns its exit status.
    func runConsole() -> Int32 {
        let environment = Environment()
        let colored = !noColor && environment["NO_COLOR"] == nil && isatty(STDOUT_FILENO) == 1
        let style = TextStyle(usesColor: colored)
        let consoleToken: ConsoleToken?
        do {
            consoleToken = try ConsoleToken.resolve(option: token, file: tokenFile, environment: environment)
        } catch {
            StandardStreams.error(style.red("error: ") + error.message + "\n")
            return CommandOutcome.usageError.exitStatus
        }
        let storesToken: StoresToken?
        do {
            storesToken = try StoresToken.resolve(file: storesTokenFile, environment: environment)
        } catch {
            StandardStreams.error(style.red("error: ") + error.message + "\n")
            return CommandOutcome.usageError.exitStatus
        }
        for file in [tokenFile, storesTokenFile].compactMap({ $0 }) where TokenFile.isReadableByOthers(path: file) {
            StandardStreams.error(style.yellow("warning: ") + "other users of this machine can read the token file \(file); chmod 600 it\n")
        }
        var clientTLS: EntitledClientTLS?
        if tls || tlsCa != nil {
            do {
                clientTLS = try EntitledClientTLS(trustedCertificatesFile: tlsCa)
            } catch {
                StandardStreams.error(style.red("error: ") + "cannot set up TLS: \(error)\n")
                return CommandOutcome.usageError.exitStatus
            }
        }
        let connection = EntitledConnection(
            address: address, timeout: timeout, token: consoleToken?.value, tls: clientTLS, loadingWait: timeout
        )
        let session = ConsoleSession(
            connection: connection, printsJSON: json, style: style, tokenOrigin: consoleToken?.origin,
            confirmation: yes ? .assumeYes : .refuse,
            standardOutput: { StandardStreams.output($0 + "\n") },
            standardError: { StandardStreams.error($0 + "\n") }
        )
        session.webhookAdministration = StoresAdministration(address: stores, token: storesToken, timeout: timeout)
        if !command.isEmpty {
            return session.runOneShot(words: command).exitStatus
        }
        if isatty(STDIN_FILENO) == 1 {
            return InteractiveConsole(session: session, historyPath: environment.historyPath, token: consoleToken?.value).run()
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
        // Parsed, so the token has been copied out of argv: hide it from `ps` before anything else.
        if parsed.token != nil { ArgumentScrubbing.overwriteTokenArguments() }
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
