import ArgumentParser
import Foundation

/// `entitled-bench unsynced-reads`: what holding reads until the log has synced the changes they may
/// have seen (`entitled --unsynced-reads hold`) costs the checks of a mixed load, against answering them
/// at once (`answer`): the measurement behind the default (Protocol/STORAGE.md, "Reads and unsynced
/// changes").
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

    @Option(help: "The entitled binary (default: entitled next to this executable, in the same build folder).")
    var entitled: String?

    @Option(help: "The entitled-loadgen binary (default: entitled-loadgen next to this executable).")
    var loadgen: String?

    @Option(help: "Users loaded, each holding one membership.")
    var users = 20_000

    @Option(help: "Concurrent connections.")
    var connections = 50

    @Option(help: "Seconds each measurement runs, after the warm-up.")
    var duration = 3.0

    @Option(help: "Seconds of warm-up before each measurement.")
    var warmup = 1.0

    @Option(help: "Measurements of each setting; medians are reported.")
    var runs = 5

    @Option(name: .customLong("work-dir"), help: "Where the data directories go (a real disk: fsync must mean something).")
    var workDir = NSTemporaryDirectory()

    func run() throws {
        cleanup.installSignalHandlers()
        defer { cleanup.runAll() }
        let entitledPath = entitled ?? Executables.defaultEntitled()
        let generator = try Executables.loadGenerator(loadgen)
        let root = try cleanup.makeTemporaryDirectory(in: workDir.hasSuffix("/") ? String(workDir.dropLast()) : workDir, prefix: "entitled-bench-reads")
        let shape = LoadShape(connections: connections, pipeline: 1, users: users, distribution: .uniform, mix: .mixed)
        var results: [UnsyncedReads: [Measurement]] = [:]
        for run in 1...runs {
            for setting in UnsyncedReads.allCases {
                let directory = root + "/\(setting.rawValue)-\(run)"
                let server = try EntitledProcess.start(
                    binary: entitledPath, dataDirectory: directory, fsync: "always", extraArguments: ["--unsynced-reads", setting.rawValue]
                )
                defer {
                    _ = server.process.stop()
                    try? FileManager.default.removeItem(atPath: directory)
                }
                try EntitledProcess.defineProEntitlement(port: server.port)
                let loaded = try LoadEngine.load(port: server.port, target: .entitled, users: users)
                guard loaded.errors == 0 else { throw BenchError("loading failed: \(loaded.firstError ?? "?")") }
                let outcome = try NeutralLoad(binary: generator, directory: root).measure(
                    port: server.port, serverPID: server.process.pid, target: .entitled, shape: shape, warmup: warmup,
                    duration: duration, seed: UInt64(run)
                )
                guard outcome.errors == 0 else { throw BenchError("the load failed: \(outcome.firstError ?? "?")") }
                let measurement = Measurement(outcome)
                results[setting, default: []].append(measurement)
                progress(
                    "run \(run)/\(runs), --unsynced-reads \(setting.rawValue): \(Int(measurement.requestsPerSecond)) req/s, checks p50 \(Int(measurement.checkP50)) µs, p99 \(Int(measurement.checkP99)) µs"
                )
            }
        }
        print("unsynced reads: \(connections) connections, 95% checks and 5% grants, entitled --fsync always, medians of \(runs) runs of \(duration) s")
        for setting in UnsyncedReads.allCases {
            let runs = results[setting] ?? []
            print(
                "\(setting.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) requests/s \(Int(median(runs.map(\.requestsPerSecond))))   checks p50 \(Self.format(median(runs.map(\.checkP50)))) µs   p99 \(Self.format(median(runs.map(\.checkP99)))) µs"
            )
        }
        let answer = results[.answer] ?? [], hold = results[.hold] ?? []
        let p50Ratio = median(hold.map(\.checkP50)) / max(1, median(answer.map(\.checkP50)))
        print("hold/answer: checks p50 \(String(format: "%.2f", p50Ratio))x, p99 \(String(format: "%.2f", median(hold.map(\.checkP99)) / max(1, median(answer.map(\.checkP99)))))x, requests/s \(String(format: "%.2f", median(hold.map(\.requestsPerSecond)) / max(1, median(answer.map(\.requestsPerSecond)))))x")
    }

    /// What one run of one setting gave.
    struct Measurement {
        var requestsPerSecond: Double
        /// The checks' latency, microseconds.
        var checkP50: Double
        var checkP99: Double

        init(_ outcome: LoadOutcome) {
            requestsPerSecond = outcome.requestsPerSecond
            checkP50 = Double(outcome.checkHistogram.valueAtPercentile(50)) / 1000
            checkP99 = Double(outcome.checkHistogram.valueAtPercentile(99)) / 1000
        }
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// `entitled --unsynced-reads`.
enum UnsyncedReads: String, CaseIterable {
    case answer
    case hold
}
