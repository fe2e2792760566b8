import Foundation

/// Renders a `BenchReport` as the table printed on standard output.
enum ReportTable {
    static func render(_ report: BenchReport) -> String {
        var out: [String] = []
        let settings = report.settings
        let machine = report.machine
        out.append("entitled-bench durability  \(report.startedAt)")
        out.append(
            "machine: \(machine.cpus) CPUs, \(machine.memoryGiB) GiB, \(machine.kernel); data directories on \(machine.workFileSystem)"
        )
        out.append("entitled: \(settings.entitledBinary)")
        out.append("redis:    \(settings.redisServer.map { "\($0) (\(settings.redisVersion ?? "?"))" } ?? "not found")")
        if let writes = report.writes { out += renderWrites(writes, settings) }
        if let snapshot = report.snapshot { out += renderSnapshot(snapshot, settings) }
        if !report.goals.isEmpty {
            out.append("")
            out.append("Goals (issues 3, 5 and 22)")
            for goal in report.goals {
                let verdict = goal.met.map { $0 ? "met" : "MISSED" } ?? "not measured"
                out.append("  " + pad(goal.name, 48) + pad(goal.target, 10) + pad(goal.measured, 32) + verdict)
            }
        }
        return out.joined(separator: "\n")
    }

    private static func renderWrites(_ writes: WriteSection, _ settings: BenchSettings) -> [String] {
        var out = ["", "Durable writes: closed loop, one request in flight per connection, one generator thread, fresh server per run;"]
        out.append(
            "  \(settings.runs) run(s) of \(format(settings.durationSeconds, 1)) s (+\(format(settings.warmupSeconds, 1)) s warm-up), median shown."
        )
        out.append("  entitled --fsync always: grant of a new user;  redis appendonly yes, appendfsync always: SADD ents:<user> pro")
        out.append("  CPU µs: the server's CPU time (user and system, every thread) per write over the measured window (c generator)")
        out.append("")
        out.append(
            "  " + pad("system", 22) + lpad("conns", 6) + lpad("req/s", 11) + lpad("p50 ms", 9) + lpad("p99 ms", 9) + lpad("CPU µs", 8)
                + "   runs (req/s)"
        )
        for measurement in writes.measurements {
            let name = "\(measurement.system) \(measurement.operation)"
            let runs = measurement.runs.map { run in
                guard run.failure == nil else { return "failed" }
                return grouped(run.requestsPerSecond) + ((run.otherCPUCores ?? 0) > busyCores ? "*" : "")
            }.joined(separator: " / ")
            if let median = measurement.median {
                out.append(
                    "  " + pad(name, 22) + lpad("\(measurement.connections)", 6) + lpad(grouped(median.requestsPerSecond), 11)
                        + lpad(format(median.p50Ms, 3), 9) + lpad(format(median.p99Ms, 3), 9)
                        + lpad(median.serverCPUMicrosecondsPerRequest.map { format($0, 2) } ?? "—", 8) + "   " + runs
                )
            } else {
                out.append("  " + pad(name, 22) + lpad("\(measurement.connections)", 6) + lpad("—", 11) + "   " + runs)
            }
        }
        for ratio in writes.ratios {
            out.append(
                "  " + pad("entitled / redis", 22) + lpad("\(ratio.connections)", 6) + lpad(format(ratio.entitledOverRedis, 2) + "×", 11)
                    + lpad("", 18) + lpad(ratio.serverCPUEntitledOverRedis.map { format($0, 2) + "×" } ?? "", 8)
            )
        }
        for ceiling in writes.ceilings {
            out.append(
                "  " + pad("ceiling (no sync)", 22) + lpad("\(ceiling.connections)", 6)
                    + lpad(format(ceiling.entitledUnsyncedOverRedis, 2) + "×", 11)
                    + "   entitled with no sync / Redis always; Redis with no sync / Redis always: \(format(ceiling.redisUnsyncedOverRedis, 2))×"
            )
        }
        for ratio in writes.generatorRatios {
            out.append(
                "  " + pad("generator / r-bench", 22) + lpad("\(ratio.connections)", 6)
                    + lpad(format(ratio.generatorOverRedisBenchmark, 2) + "×", 11) + "   (Redis driven by this tool / by redis-benchmark)"
            )
        }
        if let skipped = writes.redisSkipped { out.append("  Redis not measured: \(skipped)") }
        let other = writes.measurements.flatMap(\.runs).compactMap(\.otherCPUCores)
        if let most = other.max() {
            out.append(
                "  other processes' CPU during the runs: \(format(other.min() ?? 0, 2))–\(format(most, 2)) cores"
                    + (most > busyCores ? "; * marks runs above \(format(busyCores, 2)), whose numbers are disturbed" : "")
            )
        }
        for measurement in writes.measurements {
            for run in measurement.runs {
                let label = "  \(measurement.system) \(measurement.connections) conn, run \(run.run):"
                if let failure = run.failure { out.append("\(label) FAILED: \(failure)") }
                if run.errors > 0 { out.append("\(label) \(run.errors) error answers, first: \(run.firstError ?? "?")") }
                for problem in run.serverProblems.prefix(5) { out.append("\(label) server: \(problem)") }
            }
        }
        return out
    }

    private static func renderSnapshot(_ section: SnapshotSection, _ settings: BenchSettings) -> [String] {
        var out = ["", "Snapshot and recovery: \(grouped(Double(section.memberships))) memberships, entitled --fsync no --snapshot-interval 0"]
        if let load = section.load {
            out.append(
                "  load               \(grouped(Double(load.grants))) grants in \(format(load.seconds, 2)) s (\(grouped(load.grantsPerSecond))/s) over \(load.connections) conns × \(load.window) in flight; \(load.errors) errors; server RSS \(mebibytes(load.serverResidentBytes))"
            )
        }
        if let first = section.firstSnapshot { out.append("  snapshot 1         " + describe(first)) }
        if let second = section.secondSnapshot { out.append("  snapshot 2         " + describe(second) + "  (under checks)") }
        if section.checksWithoutSnapshot != nil || section.checksDuringSnapshot != nil {
            out.append("")
            out.append(
                "  check latency, \(settings.checkConnections) conns   " + lpad("window s", 9) + lpad("checks/s", 10) + lpad("p50 ms", 9)
                    + lpad("p99 ms", 9) + lpad("p99.9 ms", 10) + lpad("max ms", 9) + lpad("errors", 8)
            )
            for (name, window) in [("without snapshot", section.checksWithoutSnapshot), ("during snapshot", section.checksDuringSnapshot)] {
                guard let window else { continue }
                out.append(
                    "    " + pad(name, 23) + lpad(format(window.windowMs / 1000, 2), 9) + lpad(grouped(window.checksPerSecond), 10)
                        + lpad(format(window.latency.p50Ms, 3), 9) + lpad(format(window.latency.p99Ms, 3), 9)
                        + lpad(format(window.latency.p999Ms, 3), 10) + lpad(format(window.latency.maxMs, 2), 9)
                        + lpad("\(window.errors + window.inactive)", 8)
                        + ((window.otherCPUCores ?? 0) > busyCores ? "  * other processes: \(format(window.otherCPUCores ?? 0, 2)) cores" : "")
                )
            }
            out.append("")
        }
        if let stop = section.gracefulStop {
            out.append(
                "  graceful stop      SIGTERM to exit \(format(stop.seconds, 2)) s, \(stop.wroteFinalSnapshot ? "final snapshot written" : "no final snapshot (nothing changed since the last)"), \(stop.exit)\(stop.killed ? ", needed SIGKILL" : "")"
            )
        }
        if let restart = section.restartFromSnapshot {
            out.append("  restart, snapshot  ready after \(format(restart.secondsToReady, 3)) s" + recoveryFields(restart.recovery) + disturbed(restart))
        }
        if let log = section.logLoad {
            out.append("  log                \(grouped(Double(log.grants))) more grants, then kill -9")
        }
        for (index, recovery) in section.recoveries.enumerated() {
            out.append(
                "  recovery \(index + 1)         ready after \(format(recovery.secondsToReady, 3)) s (snapshot + log)" + recoveryFields(recovery.recovery)
                    + disturbed(recovery)
            )
        }
        if let median = section.recoveryMedianSeconds {
            out.append("  recovery median    \(format(median, 3)) s from launch to the ready line")
        }
        for problem in section.verificationProblems { out.append("  VERIFY: \(problem)") }
        for problem in Array(Set(section.serverProblems)).sorted().prefix(10) { out.append("  server: \(problem)") }
        if let failure = section.failure { out.append("  FAILED: \(failure)") }
        return out
    }

    /// Above this many cores used by other processes, a measurement is marked as disturbed.
    static let busyCores = 0.3

    private static func disturbed(_ restart: RestartTiming) -> String {
        (restart.otherCPUCores ?? 0) > busyCores ? "  * other processes: \(format(restart.otherCPUCores ?? 0, 2)) cores" : ""
    }

    private static func describe(_ snapshot: SnapshotTiming) -> String {
        "server \(grouped(Double(snapshot.serverMs))) ms, wall \(grouped(snapshot.wallMs)) ms, \(mebibytes(snapshot.bytes)), \(grouped(Double(snapshot.memberships))) memberships"
    }

    private static func recoveryFields(_ recovery: RecoveryLine?) -> String {
        guard let recovery else { return "; no recovery line" }
        return "; server: ms=\(recovery.milliseconds.map(String.init) ?? "?") replayed=\(recovery.replayed.map(String.init) ?? "?") memberships=\(recovery.memberships.map(String.init) ?? "?")"
    }

    // MARK: Formatting

    static func format(_ value: Double, _ decimals: Int) -> String {
        String(format: "%.\(decimals)f", value)
    }

    /// A whole number with thin groups of three digits: 1 234 567.
    static func grouped(_ value: Double) -> String {
        let digits = String(Int(value.rounded()))
        var result = ""
        for (index, character) in digits.enumerated() {
            let left = digits.count - index
            if index > 0 && left % 3 == 0 && character != "-" && result.last != "-" { result += " " }
            result.append(character)
        }
        return result
    }

    static func mebibytes(_ bytes: Int?) -> String {
        guard let bytes else { return "?" }
        return "\(format(Double(bytes) / Double(1 << 20), 1)) MiB"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func lpad(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
