import ArgumentParser
import Foundation

/// `entitled-bench unsynced-reads`: what holding reads until the log has synced the changes they may have
/// seen (`entitled --unsynced-reads hold`) costs the checks of a mixed load, against answering them at once
/// (`answer`): the measurement behind the default (Protocol/STORAGE.md, "Reads and unsynced changes").
struct UnsyncedReadsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsynced-reads",
        abstract: "Measures what entitled --unsynced-reads hold costs checks under writes, against answer.",
        discussion: "What is measured and how: Tools/entitled-bench/README.md."
    )

    @OptionGroup var common: CommonOptions
    @Option(help: "The entitled-loadgen binary (default: next to this executable).") var loadgen: String?
    @Option(help: "Users loaded, each holding one membership.") var users = 20_000
    @Option(help: "Concurrent connections.") var connections = 50
    @Option(help: "Seconds each measurement runs, after the warm-up.") var duration = 3.0
    @Option(help: "Seconds of warm-up before each measurement.") var warmup = 1.0
    @Option(help: "Measurements of each setting; medians are reported.") var runs = 5

    func run() throws {
        let entitledPath = try Executables.entitled(common.entitled)
        let root = try common.workRoot(prefix: "entitled-bench-reads")
        let neutral = NeutralLoad(binary: try Executables.loadGenerator(loadgen), directory: root)
        let shape = LoadShape(connections: connections, pipeline: 1, users: users, distribution: .uniform, mix: .mixed)
        let settings = ["answer", "hold"]
        // Per setting (`entitled --unsynced-reads`), each run's requests per second and the checks' own p50 and p99 in µs.
        var results: [String: [[Double]]] = [:]
        for run in 1...runs {
            for setting in settings {
                let directory = root + "/\(setting)-\(run)"
                let server = try Server.entitled(entitledPath, dataDirectory: directory, fsync: "always", options: ["--unsynced-reads", setting])
                defer {
                    server.process.stop()
                    try? FileManager.default.removeItem(atPath: directory)
                }
                _ = try PipelinedLoader.grants(to: server, users: users)
                let outcome = try neutral.measure(server, shape: shape, warmup: warmup, duration: duration, seed: UInt64(run))
                guard outcome.errors == 0 else { throw BenchError("the load failed: \(outcome.firstError ?? "?")") }
                let measured = [outcome.requestsPerSecond] + [50.0, 99].map { Double(outcome.checkHistogram.valueAtPercentile($0)) / 1000 }
                results[setting, default: []].append(measured)
                progress("run \(run)/\(runs), --unsynced-reads \(setting): \(Int(measured[0])) req/s, checks p50 \(Int(measured[1])) µs, p99 \(Int(measured[2])) µs")
            }
        }
        let medians = settings.map { setting in (0..<3).map { figure in median(results[setting, default: []].map { $0[figure] }) } }
        print("unsynced reads: \(connections) connections, 95% checks and 5% grants, entitled --fsync always, medians of \(runs) runs of \(duration) s")
        let rows = zip(settings, medians).map { setting, measured in [setting, Format.grouped(measured[0])] + measured[1...].map { Format.fixed($0, 1) } }
        let ratios = ["hold / answer"] + (0..<3).map { Format.fixed(medians[1][$0] / max(1, medians[0][$0]), 2) + "×" }
        print(Format.columns([["--unsynced-reads", "requests/s", "checks p50 µs", "checks p99 µs"]] + rows + [ratios]) { $0 > 0 }.joined(separator: "\n"))
    }
}
