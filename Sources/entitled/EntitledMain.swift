import ArgumentParser
import Dispatch
// FoundationEssentials, not Foundation: only `ProcessInfo`'s environment is needed here (see ConfigurationFile.swift).
import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry point: runs `EntitledCommand` on Swift concurrency's global executor while the main thread
/// waits for it, with the configuration file and the `ENTITLED_*` environment variables turned into
/// arguments before the real ones (see `LayeredArguments`).
///
/// Not an async `main` (what `@main` on an `AsyncParsableCommand` gives): on Linux that parks the main
/// thread in libdispatch's `dispatch_main`, whose `sigsuspend` passes a signal mask in read-only memory,
/// and valgrind 3.19 writes to that mask (to keep its own signal unblocked) and crashes. Nothing in the
/// server runs on the main actor, so the main thread has nothing else to do than wait; signals (SIGTERM,
/// SIGINT) still reach the process as before.
@main
enum EntitledMain {
    static func main() {
        let commandLine = Array(CommandLine.arguments.dropFirst())
        let environment = ProcessInfo.processInfo.environment
        let finished = DispatchSemaphore(value: 0)
        // Detached: `main` is on the main actor, whose queue nobody drains while this thread waits.
        Task.detached {
            await run(commandLine: commandLine, environment: environment)  // exits the process itself on an error
            finished.signal()
        }
        finished.wait()
    }

    /// What `EntitledCommand.main(_:)` does, with two additions: a parser error about a value that came from
    /// the file or the environment says so (the command line the operator typed does not show it), and
    /// unknown `ENTITLED_*` variables are warned about in the log's own format once it is known.
    private static func run(commandLine: [String], environment: [String: String]) async {
        let layered: LayeredArguments
        do throws(ConfigurationError) {
            layered = try LayeredArguments(commandLine: commandLine, environment: environment)
        } catch {
            // As a bad flag is refused: the parser's message format and exit status (64).
            EntitledCommand.exit(withError: ValidationError(error.message))
        }
        var command: any ParsableCommand
        do {
            command = try await EntitledCommand.asyncParseAsRoot(layered.arguments)
        } catch {
            refuse(parserError: error, layered: layered)
        }
        if let entitled = command as? EntitledCommand, !layered.unknownVariables.isEmpty {
            warn(unknownVariables: layered.unknownVariables, level: entitled.logLevel, format: entitled.logFormat)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            EntitledCommand.exit(withError: error)
        }
    }

    /// Exits as the parser would for `error`, with a note after its first line naming the origin of each
    /// synthesized option it mentions: `Note: --port came from ENTITLED_PORT.`
    private static func refuse(parserError error: any Error, layered: LayeredArguments) -> Never {
        let message = EntitledCommand.fullMessage(for: error)
        let code = EntitledCommand.exitCode(for: error)
        guard code != .success, let explanation = layered.explanation(ofParserMessage: message) else {
            EntitledCommand.exit(withError: error)
        }
        var lines = message.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.insert("Note: \(explanation).", at: min(1, lines.count))
        writeToStandardError(lines.joined(separator: "\n") + "\n")
        EntitledCommand.exit(withError: code)
    }

    /// One warning line naming every unknown variable (with the closest setting's variable when there is one),
    /// through a logger of the format and level the command line chose: `--log-format json` stays one JSON
    /// object per line. Logging's bootstrap is `run()`'s, so the handler is made here directly.
    private static func warn(unknownVariables: [String], level: Logger.Level, format: LogFormat) {
        let logger = Logger(label: "entitled") { label in format.makeHandler(label: label, level: level) }
        let described = unknownVariables.map { variable in
            let name = String(variable.dropFirst(EnvironmentOverrides.prefix.count).lowercased().map { $0 == "_" ? "-" : $0 })
            guard let closest = ConfigurationKey.closest(to: name) else { return variable }
            return "\(variable) (did you mean \(closest.environmentVariable)?)"
        }
        logger.warning(
            "ignoring unknown environment variables: \(described.joined(separator: ", ")); the settings are ENTITLED_ and a long flag name, such as ENTITLED_DATA_DIR"
        )
    }

    private static func writeToStandardError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
