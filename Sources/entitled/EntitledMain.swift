import ArgumentParser
import Dispatch
// FoundationEssentials, not Foundation: only `ProcessInfo`'s environment is needed here (see EntitledConfiguration's SettingsFile.swift).
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The entry point: runs `EntitledCommand` on Swift concurrency's global executor while the main thread
/// waits for it.
///
/// Not an async `main` (what `@main` on an `AsyncParsableCommand` gives): on Linux that parks the main
/// thread in libdispatch's `dispatch_main`, whose `sigsuspend` passes a signal mask in read-only memory,
/// and valgrind 3.19 writes to that mask (to keep its own signal unblocked) and crashes. Nothing in the
/// server runs on the main actor, so the main thread has nothing else to do than wait; signals (SIGTERM,
/// SIGINT, SIGHUP) still reach the process as before.
@main
enum EntitledMain {
    static func main() {
        // SIGHUP's default action ends the process, and `systemctl reload` (ExecReload=kill -HUP) may send
        // it at any moment, a long recovery of the data directory included: ignored from the first
        // instruction, until `serve()` traps it (`TokenReloadService.trapHangups()`) before reading the
        // auth file, so that one ignored here could not have asked for anything the start does not read.
        signal(SIGHUP, SIG_IGN)
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

    /// What `EntitledCommand.main(_:)` does, with `environment` passed in. The command line is parsed first
    /// and alone, so `--help` and `--version` answer whatever the configuration file and the environment
    /// hold; `EntitledCommand.run(environment:)` then layers them.
    private static func run(commandLine: [String], environment: [String: String]) async {
        let command: any ParsableCommand
        do {
            command = try await EntitledCommand.asyncParseAsRoot(commandLine)
        } catch {
            EntitledCommand.exit(withError: error)
        }
        do {
            if let entitled = command as? EntitledCommand {
                try await entitled.run(environment: environment)
            } else if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            // A refused setting is a ValidationError: the parser's format and exit status (64).
            EntitledCommand.exit(withError: error)
        }
    }
}
