import Foundation

/// The table `entitled-bench checks` prints: one row per scenario, entitled next to Redis.
enum ChecksReportTable {
    static func render(_ report: ChecksReport) -> String {
        let settings = report.settings
        var lines = [
            "entitled-bench checks  \(report.startedAt)",
            "machine: \(report.machine.cpus) cores, \(report.machine.kernel); \(settings.redisVersion)",
            "load: \(ReportTable.grouped(Double(settings.users))) users, one membership each; \(settings.mix.rawValue), "
                + "\(settings.distribution.rawValue) keys; fsync \(settings.fsync); "
                + (settings.generator == .c
                    ? "C load generator (one thread, no spinning)"
                    : "\(settings.threads) load thread(s) polling \(settings.generatorSpinMicroseconds) µs before sleeping")
                + "; medians of \(settings.runs) runs of \(ReportTable.format(settings.durationSeconds, 1)) s"
                + (settings.idleConnections.map { $0 > 0 ? "; \(ReportTable.grouped(Double($0))) idle connections held to each server" : "" } ?? ""),
        ]
        if let entitled = report.residentBytesAfterLoad["entitled"], let redis = report.residentBytesAfterLoad["redis"] {
            lines.append(
                "resident memory after loading: entitled \(ReportTable.format(Double(entitled) / 1_048_576, 1)) MiB, "
                    + "redis \(ReportTable.format(Double(redis) / 1_048_576, 1)) MiB"
            )
        }
        lines.append("")
        var header = ["conns", "pipeline", "entitled req/s", "redis req/s", "ratio", "p50 µs (e/r)", "p99 µs (e/r)", "p99.9 µs (e/r)"]
        let measuredCPU = report.scenarios.contains { $0.serverCPURatio != nil }
        if measuredCPU { header += ["server CPU µs/req (e/r)", "CPU ratio", "generator cores"] }
        let validated = report.scenarios.contains { $0.redisBenchmarkRequestsPerSecond != nil }
        if validated { header += ["redis-benchmark req/s", "generator / r-b"] }
        var rows = [header]
        for scenario in report.scenarios {
            let e = scenario.entitledMedian
            let r = scenario.redisMedian
            var row = [
                "\(scenario.connections)", "\(scenario.pipeline)",
                ReportTable.grouped(e.requestsPerSecond), ReportTable.grouped(r.requestsPerSecond),
                ReportTable.format(scenario.throughputRatio, 2) + "×",
                "\(Int(e.p50Microseconds)) / \(Int(r.p50Microseconds))",
                "\(Int(e.p99Microseconds)) / \(Int(r.p99Microseconds))",
                "\(Int(e.p999Microseconds)) / \(Int(r.p999Microseconds))",
            ]
            if measuredCPU {
                let cpu = [e, r].map { $0.serverCPUMicrosecondsPerRequest.map { ReportTable.format($0, 2) } ?? "—" }
                row.append(cpu.joined(separator: " / "))
                row.append(scenario.serverCPURatio.map { ReportTable.format($0, 2) + "×" } ?? "—")
                row.append([e, r].map { $0.generatorCores.map { ReportTable.format($0, 2) } ?? "—" }.joined(separator: " / "))
            }
            if validated {
                row.append(scenario.redisBenchmarkRequestsPerSecond.map(ReportTable.grouped) ?? "—")
                row.append(scenario.generatorOverRedisBenchmark.map { ReportTable.format($0, 2) + "×" } ?? "—")
            }
            rows.append(row)
        }
        let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(
                row.enumerated().map { column, cell in
                    column < 2 ? String(repeating: " ", count: widths[column] - cell.count) + cell : cell + String(repeating: " ", count: widths[column] - cell.count)
                }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            )
        }
        if measuredCPU {
            lines += [
                "",
                "server CPU: user + system time of the server process over the measured window (/proc/PID/stat) per answered "
                    + "request; CPU ratio: entitled's over Redis's (below 1.00×: entitled is cheaper); generator cores: what the "
                    + "load generator itself used meanwhile (e/r)",
            ]
        }
        if validated {
            lines += [
                "",
                "generator / r-b: Redis's rate driven by this tool over its rate driven by redis-benchmark right after, "
                    + "median of the runs' ratios (at least 1.00×: the generator is not what limits Redis)",
            ]
        }
        let problems = report.scenarios.flatMap { scenario in
            [("entitled", scenario.entitled), ("redis", scenario.redis)].compactMap { name, runs -> String? in
                let errors = runs.map(\.errors).reduce(0, +)
                let inactive = runs.map(\.inactive).reduce(0, +)
                guard errors + inactive > 0 else { return nil }
                return "\(name) at \(scenario.connections) conns, pipeline \(scenario.pipeline): \(errors) errors, \(inactive) inactive answers; first: \(runs.compactMap(\.firstError).first ?? "-")"
            }
        }
        if !problems.isEmpty { lines += [""] + problems.map { "WARNING: " + $0 } }
        return lines.joined(separator: "\n")
    }
}
