import ArgumentParser

/// `entitled-bench`: entitled next to Redis, in one run, against real processes.
struct EntitledBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitled-bench",
        abstract: "Benchmarks entitled next to Redis (redis-server) in one run: check load, durability, memory, cluster mode.",
        subcommands: [ChecksCommand.self, DurabilityCommand.self, MemoryCommand.self, ClusterCommand.self, UnsyncedReadsCommand.self],
        defaultSubcommand: ChecksCommand.self
    )
}

EntitledBench.main()
