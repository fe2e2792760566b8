import ArgumentParser
import Foundation

/// `entitled-bench unsynced-reads`: what holding reads until the log has synced the changes they may have
/// seen (`entitled --unsynced-reads hold`) costs the checks of a mixed load, against answering them at once
/// (`answer`): the measurement behind the default (Protocol/STORAGE.md, "Reads and unsynced changes").
struct UnsyncedReadsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsynced-reads",
        abstract: "Measures what entitled --unsynced-reads hold costs checks under writes, against answer.",
        discussion: """
            For each run and each setting (answer, hold) in turn: starts entitled --fsync always on a fresh data \
            directory, gives --users users one membership each, then drives the mixed load (95% checks, 5% grants, \
            one request in flight per connection) over --connections connections with entitled-loadgen, and \
            reads the checks' own latency. Reports the medians of --runs runs and hold's ratio to answer.
            """
    )

    @OptionGroup var common: CommonOptions
    @Option(help: "The entitled-loadgen binary (default: entitled-loadgen next to this executable).") var loadgen: String?
    @Option(help: "Users loaded, each holding one membership.") var users = 20_000
    @Option(help: "Concurrent connections.") var connections = 50
    @Option(help: "Seconds each measurement runs, after the warm-up.") var duration = 3.0
    @Option(help: "Seconds of warm-up before each measurement.") var warmup = 1.0
    @Option(help: "Measurements of each setting; medians are reported.") var runs = 5

    /// `entitled --unsynced-reads`.
    enum Setting: String, CaseIterable {
        case answer, hold
    }

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let entitledPath = try Executables.entitled(common.entitled)
        let root = try common.workRoot(prefix: "entitled-bench-reads")
        let neutral = NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: root)
        let shape = LoadShape(connections: connections, pipeline: 1, users: users, distribution: .uniform, mix: .mixed)
        // Per setting and run: requests per second, and the checks' p50 and p99 in µs.
        var results: [Setting: [(rate: Double, p50: Double, p99: Double)]] = [:]
        for run in 1...runs {
            for setting in Setting.allCases {
                let directory = root + "/\(setting.rawValue)-\(run)"
                let server = try EntitledProcess.start(
                    binary: entitledPath, dataDirectory: directory, fsync: "always", extraArguments: ["--unsynced-reads", setting.rawValue]
                )
                defer {
                    server.process.stop()
                    try? FileManager.default.removeItem(atPath: directory)
                }
                try EntitledProcess.defineProEntitlement(port: server.port)
                let loaded = try PipelinedLoader.grants(port: server.port, target: .entitled, users: users)
                guard loaded.errors == 0 else { throw BenchError("loading failed: \(loaded.firstError ?? "?")") }
                let outcome = try neutral.measure(
                    port: server.port, serverPID: server.process.pid, target: .entitled, shape: shape, warmup: warmup, duration: duration, seed: UInt64(run)
                )
                guard outcome.errors == 0 else { throw BenchError("the load failed: \(outcome.firstError ?? "?")") }
                let checks = outcome.checkHistogram
                let measured = (outcome.requestsPerSecond, Double(checks.valueAtPercentile(50)) / 1000, Double(checks.valueAtPercentile(99)) / 1000)
                results[setting, default: []].append(measured)
                progress(
                    "run \(run)/\(runs), --unsynced-reads \(setting.rawValue): \(Int(measured.0)) req/s, checks p50 \(Int(measured.1)) µs, p99 \(Int(measured.2)) µs"
                )
            }
        }
        let medians = Setting.allCases.map { setting in
            let runs = results[setting] ?? []
            return (rate: median(runs.map(\.rate)), p50: median(runs.map(\.p50)), p99: median(runs.map(\.p99)))
        }
        print("unsynced reads: \(connections) connections, 95% checks and 5% grants, entitled --fsync always, medians of \(runs) runs of \(duration) s")
        for (setting, measured) in zip(Setting.allCases, medians) {
            print(
                "\(setting.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) requests/s \(Int(measured.rate))   "
                    + "checks p50 \(String(format: "%.1f", measured.p50)) µs   p99 \(String(format: "%.1f", measured.p99)) µs"
            )
        }
        let (answer, hold) = (medians[0], medians[1])
        let ratio = { (top: Double, bottom: Double) in String(format: "%.2f", top / max(1, bottom)) }
        print("hold/answer: checks p50 \(ratio(hold.p50, answer.p50))x, p99 \(ratio(hold.p99, answer.p99))x, requests/s \(ratio(hold.rate, answer.rate))x")
    }
}
