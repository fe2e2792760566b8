/// The table `entitled-bench checks` prints: one row per scenario, entitled next to Redis.
enum ChecksReportTable {
    static func render(_ report: ChecksReport) -> String {
        let settings = report.settings
        var lines = [
            "entitled-bench checks  \(report.startedAt)",
            "machine: \(report.machine.cpus) cores, \(report.machine.kernel); \(settings.redisVersion)",
            "load: \(Format.grouped(Double(settings.users))) users, one membership each; \(settings.mix.rawValue), "
                + "\(settings.distribution.rawValue) keys; fsync \(settings.fsync); C load generator (one thread, no spinning)"
                + "; medians of \(settings.runs) runs of \(Format.fixed(settings.durationSeconds, 1)) s",
        ]
        if let entitled = report.residentBytesAfterLoad["entitled"], let redis = report.residentBytesAfterLoad["redis"] {
            lines.append("resident memory after loading: entitled \(Format.mebibytes(entitled)), redis \(Format.mebibytes(redis))")
        }
        lines.append("")
        var header = ["conns", "pipeline", "entitled req/s", "redis req/s", "ratio", "p50 µs (e/r)", "p99 µs (e/r)", "p99.9 µs (e/r)"]
        let measuredCPU = report.scenarios.contains { $0.serverCPURatio != nil }
        if measuredCPU { header += ["server CPU µs/req (e/r)", "CPU ratio", "generator cores"] }
        let ratio = { (value: Double?) in value.map { Format.fixed($0, 2) + "×" } ?? "—" }
        let rows = report.scenarios.map { scenario in
            let (e, r) = (scenario.entitledMedian, scenario.redisMedian)
            // entitled's figure and Redis's, whole or with `decimals`.
            let pair = { (figure: (RunResult) -> Double?, decimals: Int) in
                [e, r].map { run in figure(run).map { decimals > 0 ? Format.fixed($0, decimals) : "\(Int($0))" } ?? "—" }.joined(separator: " / ")
            }
            var row = [
                "\(scenario.connections)", "\(scenario.pipeline)", Format.grouped(e.requestsPerSecond), Format.grouped(r.requestsPerSecond),
                ratio(scenario.throughputRatio), pair({ $0.p50Microseconds }, 0), pair({ $0.p99Microseconds }, 0),
                pair({ $0.p999Microseconds }, 0),
            ]
            if measuredCPU {
                row += [pair({ $0.serverCPUMicrosecondsPerRequest }, 2), ratio(scenario.serverCPURatio), pair({ $0.generatorCores }, 2)]
            }
            return row
        }
        lines += Format.columns([header] + rows) { $0 < 2 }
        if measuredCPU {
            lines += [
                "",
                "server CPU: user + system time of the server process over the measured window (/proc/PID/stat) per answered "
                    + "request; CPU ratio: entitled's over Redis's (below 1.00×: entitled is cheaper); generator cores: what the "
                    + "load generator itself used meanwhile (e/r)",
            ]
        }
        let problems = report.scenarios.flatMap { scenario in
            [("entitled", scenario.entitled), ("redis", scenario.redis)].compactMap { name, runs -> String? in
                let errors = runs.map(\.errors).reduce(0, +)
                let inactive = runs.map(\.inactive).reduce(0, +)
                guard errors + inactive > 0 else { return nil }
                return "\(name) at \(scenario.connections) conns, pipeline \(scenario.pipeline): \(errors) errors, \(inactive) inactive answers; "
                    + "first: \(runs.compactMap(\.firstError).first ?? "-")"
            }
        }
        if !problems.isEmpty { lines += [""] + problems.map { "WARNING: " + $0 } }
        return lines.joined(separator: "\n")
    }
}
