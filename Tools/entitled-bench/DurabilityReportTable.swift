/// The table `entitled-bench durability` prints.
enum DurabilityReportTable {
    /// Above this many cores used by other processes, a measurement is marked as disturbed.
    static let busyCores = 0.3

    static func render(_ report: DurabilityReport) -> String {
        let (settings, machine) = (report.settings, report.machine)
        var out = [
            "entitled-bench durability  \(report.startedAt)",
            "machine: \(machine.cpus) CPUs, \(machine.memoryGiB) GiB, \(machine.kernel); data directories on \(machine.workFileSystem)",
            "entitled: \(settings.entitledBinary)",
            "redis:    \(settings.redisServer.map { "\($0) (\(settings.redisVersion ?? "?"))" } ?? "not found")",
        ]
        if let writes = report.writes { out += renderWrites(writes, settings) }
        if let snapshot = report.snapshot { out += renderSnapshot(snapshot, settings) }
        if !report.goals.isEmpty {
            out += ["", "Goals"]
            for goal in report.goals {
                let verdict = goal.met.map { $0 ? "met" : "MISSED" } ?? "not measured"
                out.append("  " + pad(goal.name, 48) + pad(goal.target, 10) + pad(goal.measured, 32) + verdict)
            }
        }
        return out.joined(separator: "\n")
    }

    private static func renderWrites(_ writes: WriteSection, _ settings: DurabilitySettings) -> [String] {
        var out = [
            "", "Durable writes: closed loop, one request in flight per connection, one generator thread, fresh server per run;",
            "  \(settings.runs) run(s) of \(fixed(settings.durationSeconds, 1)) s (+\(fixed(settings.warmupSeconds, 1)) s warm-up), median shown.",
            "  entitled --fsync always: grant of a new user;  redis appendonly yes, appendfsync always: SADD ents:<user> pro",
            "  CPU µs: the server's CPU time (user and system, every thread) per write over the measured window", "",
            row("system", "conns", "req/s") + lpad("p50 ms", 9) + lpad("p99 ms", 9) + lpad("CPU µs", 8) + "   runs (req/s)",
        ]
        for measurement in writes.measurements {
            let name = "\(measurement.system) \(measurement.operation)"
            let runs = measurement.runs.map { run in
                run.failure != nil ? "failed" : Format.grouped(run.requestsPerSecond) + ((run.otherCPUCores ?? 0) > busyCores ? "*" : "")
            }.joined(separator: " / ")
            guard let median = measurement.median else {
                out.append(row(name, measurement.connections, "—") + "   " + runs)
                continue
            }
            out.append(
                row(name, measurement.connections, Format.grouped(median.requestsPerSecond)) + lpad(fixed(median.p50Ms, 3), 9) + lpad(fixed(median.p99Ms, 3), 9)
                    + lpad(median.serverCPUMicrosecondsPerRequest.map { fixed($0, 2) } ?? "—", 8) + "   " + runs
            )
        }
        out += writes.ratios.map { ratio in
            row("entitled / redis", ratio.connections, fixed(ratio.entitledOverRedis, 2) + "×") + lpad("", 18)
                + lpad(ratio.serverCPUEntitledOverRedis.map { fixed($0, 2) + "×" } ?? "", 8)
        }
        out += writes.ceilings.map { ceiling in
            row("ceiling (no sync)", ceiling.connections, fixed(ceiling.entitledUnsyncedOverRedis, 2) + "×")
                + "   entitled with no sync / Redis always; Redis with no sync / Redis always: \(fixed(ceiling.redisUnsyncedOverRedis, 2))×"
        }
        out += writes.generatorRatios.map { ratio in
            row("generator / r-bench", ratio.connections, fixed(ratio.generatorOverRedisBenchmark, 2) + "×") + "   (Redis driven by this tool / by redis-benchmark)"
        }
        if let skipped = writes.redisSkipped { out.append("  Redis not measured: \(skipped)") }
        let other = writes.measurements.flatMap(\.runs).compactMap(\.otherCPUCores)
        if let most = other.max() {
            out.append(
                "  other processes' CPU during the runs: \(fixed(other.min() ?? 0, 2))–\(fixed(most, 2)) cores"
                    + (most > busyCores ? "; * marks runs above \(fixed(busyCores, 2)), whose numbers are disturbed" : "")
            )
        }
        for measurement in writes.measurements {
            for run in measurement.runs {
                let label = "  \(measurement.system) \(measurement.connections) conn, run \(run.run):"
                if let failure = run.failure { out.append("\(label) FAILED: \(failure)") }
                if run.errors > 0 { out.append("\(label) \(run.errors) error answers, first: \(run.firstError ?? "?")") }
                out += run.serverProblems.prefix(5).map { "\(label) server: \($0)" }
            }
        }
        return out
    }

    private static func renderSnapshot(_ section: SnapshotSection, _ settings: DurabilitySettings) -> [String] {
        var out = ["", "Snapshot and recovery: \(Format.grouped(Double(section.memberships))) memberships, entitled --fsync no --snapshot-interval 0"]
        if let load = section.load {
            out.append(
                "  load               \(Format.grouped(Double(load.grants))) grants in \(fixed(load.seconds, 2)) s (\(Format.grouped(load.grantsPerSecond))/s) "
                    + "over \(load.connections) conns × \(load.window) in flight; \(load.errors) errors; server RSS \(Format.mebibytes(load.serverResidentBytes))"
            )
        }
        if let first = section.firstSnapshot { out.append("  snapshot 1         " + describe(first)) }
        if let second = section.secondSnapshot { out.append("  snapshot 2         " + describe(second) + "  (under checks)") }
        if section.checksWithoutSnapshot != nil || section.checksDuringSnapshot != nil {
            out += [
                "",
                "  check latency, \(settings.checkConnections) conns   " + lpad("window s", 9) + lpad("checks/s", 10) + lpad("p50 ms", 9)
                    + lpad("p99 ms", 9) + lpad("p99.9 ms", 10) + lpad("max ms", 9) + lpad("errors", 8),
            ]
            for (name, window) in [("without snapshot", section.checksWithoutSnapshot), ("during snapshot", section.checksDuringSnapshot)] {
                guard let window else { continue }
                let latency = window.latency
                out.append(
                    "    " + pad(name, 23) + lpad(fixed(window.windowMs / 1000, 2), 9) + lpad(Format.grouped(window.checksPerSecond), 10)
                        + lpad(fixed(latency.p50Ms, 3), 9) + lpad(fixed(latency.p99Ms, 3), 9) + lpad(fixed(latency.p999Ms, 3), 10)
                        + lpad(fixed(latency.maxMs, 2), 9) + lpad("\(window.errors + window.inactive)", 8) + disturbed(window.otherCPUCores)
                )
            }
            out.append("")
        }
        if let stop = section.gracefulStop {
            let snapshot = stop.wroteFinalSnapshot ? "final snapshot written" : "no final snapshot (nothing changed since the last)"
            out.append("  graceful stop      SIGTERM to exit \(fixed(stop.seconds, 2)) s, \(snapshot), \(stop.exit)\(stop.killed ? ", needed SIGKILL" : "")")
        }
        if let restart = section.restartFromSnapshot {
            out.append(
                "  restart, snapshot  ready after \(fixed(restart.secondsToReady, 3)) s" + recoveryFields(restart.recovery) + disturbed(restart.otherCPUCores)
            )
        }
        if let log = section.logLoad { out.append("  log                \(Format.grouped(Double(log.grants))) more grants, then kill -9") }
        for (index, recovery) in section.recoveries.enumerated() {
            out.append(
                "  recovery \(index + 1)         ready after \(fixed(recovery.secondsToReady, 3)) s (snapshot + log)" + recoveryFields(recovery.recovery)
                    + disturbed(recovery.otherCPUCores)
            )
        }
        if let median = section.recoveryMedianSeconds { out.append("  recovery median    \(fixed(median, 3)) s from launch to the ready line") }
        out += section.verificationProblems.map { "  VERIFY: \($0)" }
        out += Array(Set(section.serverProblems)).sorted().prefix(10).map { "  server: \($0)" }
        if let failure = section.failure { out.append("  FAILED: \(failure)") }
        return out
    }

    /// The first columns of a row of the writes: what, at how many connections, how fast (or how much faster).
    private static func row(_ name: String, _ connections: Any, _ value: String) -> String {
        "  " + pad(name, 22) + lpad("\(connections)", 6) + lpad(value, 11)
    }

    private static func disturbed(_ otherCores: Double?) -> String {
        (otherCores ?? 0) > busyCores ? "  * other processes: \(fixed(otherCores ?? 0, 2)) cores" : ""
    }

    private static func describe(_ snapshot: SnapshotTiming) -> String {
        "server \(Format.grouped(Double(snapshot.serverMs))) ms, wall \(Format.grouped(snapshot.wallMs)) ms, \(Format.mebibytes(snapshot.bytes)), "
            + "\(Format.grouped(Double(snapshot.memberships))) memberships"
    }

    private static func recoveryFields(_ recovery: RecoveryLine?) -> String {
        guard let recovery else { return "; no recovery line" }
        let fields = [("ms", recovery.milliseconds), ("replayed", recovery.replayed), ("memberships", recovery.memberships)]
        return "; server: " + fields.map { "\($0)=\($1.map(String.init) ?? "?")" }.joined(separator: " ")
    }

    private static func fixed(_ value: Double, _ decimals: Int) -> String { Format.fixed(value, decimals) }
    private static func pad(_ text: String, _ width: Int) -> String { Format.pad(text, width) }
    private static func lpad(_ text: String, _ width: Int) -> String { Format.lpad(text, width) }
}
