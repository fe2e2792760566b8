import ArgumentParser
import Foundation

/// `entitled-bench memory`: resident memory per user holding one membership, entitled next to Redis.
struct MemoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory",
        abstract: "Measures the resident memory per user holding one membership, in entitled and in redis-server.",
        discussion: """
            Starts entitled and redis-server on 127.0.0.1 with fresh data directories, reads each one's resident \
            memory (VmRSS in /proc/PID/status), gives --users users one membership each, waits 1 s and reads it \
            again. entitled gets a define of entitlement pro (product prod_pro), then per user {"op":"grant",\
            "user":"<12 digits>","product":"prod_pro","source":"app_store","expiresAt":"<30 days ahead>"}; Redis \
            gets per user one hash with the same fields, HSET m:<user> id <16 hex digits> product prod_pro user \
            <user> source app_store created_at <ms> expires_at <ms>. Both are loaded pipelined over --connections \
            connections, every answer checked.

            The table shows, per server, RSS before and after, (after − before)/users and after/users, and \
            entitled's ratio to Redis; also Redis's own used_memory (INFO memory) per user. The figure that \
            counts for the goal (memory per user at most 0.8× Redis holding the same fields in one hash per \
            user) is (after − before)/users: the memory a user costs, without the empty process.

            Both servers are stopped and the temporary directories removed at the end, also after an error or \
            an interrupt. Progress goes to standard error, the table to standard output.
            """
    )

    @Option(help: "The entitled binary (default: entitled next to this executable, in the same build folder).")
    var entitled: String?

    @Option(
        name: .customLong("entitled-option"),
        parsing: .unconditionalSingleValue,
        help: "An extra option for entitled, e.g. --entitled-option=--event-loops=1; repeat for several."
    )
    var entitledOptions: [String] = []

    @Option(name: .customLong("redis-server"), help: "The redis-server binary (a name is looked up on PATH).")
    var redisServer = "redis-server"

    @Option(help: "Users loaded into each server, each holding one membership.")
    var users = 1_000_000

    @Option(help: "Connections loading each server.")
    var connections = 8

    @Option(help: "Requests in flight per loading connection.")
    var pipeline = 256

    @Option(help: "Durability of both servers' writes while loading: always, everysec or no (entitled --fsync, Redis appendfsync).")
    var fsync = "no"

    @Option(name: .customLong("work-dir"), help: "Where the temporary data directories go.")
    var workDir = NSTemporaryDirectory()

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    func validate() throws {
        guard (1...50_000_000).contains(users) else { throw ValidationError("--users must be 1 to 50000000") }
        guard (1...256).contains(connections) else { throw ValidationError("--connections must be 1 to 256") }
        guard (1...100_000).contains(pipeline) else { throw ValidationError("--pipeline must be 1 to 100000") }
        guard ["always", "everysec", "no"].contains(fsync) else { throw ValidationError("--fsync must be always, everysec or no") }
        guard !workDir.isEmpty else { throw ValidationError("--work-dir must not be empty") }
    }

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let report = try MemoryBenchmark(options: self).run()
        print(MemoryReportTable.render(report))
        if let json {
            try writeJSON(report, to: json)
        }
    }
}
