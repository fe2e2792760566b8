import Foundation

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
            let rows = report.goals.map { [$0.name, $0.target, $0.measured, $0.met.map { $0 ? "met" : "MISSED" } ?? "not measured"] }
            out += ["", "Goals"] + indented(rows) { _ in false }
        }
        return out.joined(separator: "\n")
    }

    private static func renderWrites(_ writes: WriteSection, _ settings: DurabilitySettings) -> [String] {
        var rows = [["system", "conns", "req/s", "p50 ms", "p99 ms", "CPU µs", "runs (req/s)"]]
        for measurement in writes.measurements {
            let runs = measurement.runs.map { run in
                run.failure != nil ? "failed" : Format.grouped(run.requestsPerSecond) + ((run.otherCPUCores ?? 0) > busyCores ? "*" : "")
            }
            let median = measurement.median
            rows.append(
                ["\(measurement.system) \(measurement.operation)", "\(measurement.connections)", median.map { Format.grouped($0.requestsPerSecond) } ?? "—"]
                    + [median?.p50Ms, median?.p99Ms].map { $0.map { fixed($0, 3) } ?? "" }
                    + [median?.serverCPUMicrosecondsPerRequest.map { fixed($0, 2) } ?? (median == nil ? "" : "—"), runs.joined(separator: " / ")]
            )
        }
        rows += writes.ratios.map {
            ["entitled / redis", "\($0.connections)", fixed($0.entitledOverRedis, 2) + "×", "", "", $0.serverCPUEntitledOverRedis.map { fixed($0, 2) + "×" } ?? "", ""]
        }
        rows += writes.ceilings.map {
            ["ceiling (no sync)", "\($0.connections)", fixed($0.entitledUnsyncedOverRedis, 2) + "×", "", "", "", "entitled no sync / Redis always; Redis no sync / Redis always: \(fixed($0.redisUnsyncedOverRedis, 2))×"]
        }
        var out = [
            "", "Durable writes: closed loop, one request in flight per connection, one generator thread, fresh server per run;",
            "  \(settings.runs) run(s) of \(fixed(settings.durationSeconds, 1)) s (+\(fixed(settings.warmupSeconds, 1)) s warm-up), median shown.",
            "  entitled --fsync always: grant of a new user;  redis appendonly yes, appendfsync always: SADD ents:<user> pro",
            "  CPU µs: the server's CPU time (user and system, every thread) per write over the measured window", "",
        ]
        out += indented(rows) { (1...5).contains($0) }
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
        let windows = [("without snapshot", section.checksWithoutSnapshot), ("during snapshot", section.checksDuringSnapshot)].compactMap { name, window in
            window.map { window in
                [name, fixed(window.windowMs / 1000, 2), Format.grouped(window.checksPerSecond)]
                    + [window.latency.p50Ms, window.latency.p99Ms, window.latency.p999Ms].map { fixed($0, 3) }
                    + [fixed(window.latency.maxMs, 2), "\(window.errors + window.inactive)", disturbed(window.otherCPUCores).trimmingCharacters(in: .whitespaces)]
            }
        }
        if !windows.isEmpty {
            let header = ["check latency, \(settings.checkConnections) conns", "window s", "checks/s", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "errors", ""]
            out += [""] + indented([header] + windows) { (1...7).contains($0) } + [""]
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

    /// `rows` as aligned columns, two spaces in.
    private static func indented(_ rows: [[String]], rightAligned: (Int) -> Bool) -> [String] {
        Format.columns(rows, rightAligned: rightAligned).map { "  " + $0 }
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
}
