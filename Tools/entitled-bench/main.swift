import ArgumentParser
import Foundation

/// `entitled-bench`: entitled next to Redis, in one run, against real processes.
struct EntitledBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled-bench",
        abstract: "Benchmarks entitled next to Redis (redis-server) in one run: check load, durability, memory, restarts, cluster mode.",
        subcommands: [ChecksCommand.self, DurabilityCommand.self, MemoryCommand.self, RestartCommand.self, ClusterCommand.self, UnsyncedReadsCommand.self],
        defaultSubcommand: ChecksCommand.self
    )
}

// Every server and temporary directory a command made goes at the end: after it ran, after an error (the
// argument parser ends the process with exit()), and after SIGINT or SIGTERM.
cleanup.installSignalHandlers()
atexit { cleanup.runAll() }
EntitledBench.main()
