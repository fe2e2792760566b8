/// The table `entitled-bench restart` prints.
enum RestartReportTable {
    static func render(_ report: RestartReport) -> String {
        let (entitled, redis, machine) = (report.entitled, report.redis, report.machine)
        var lines = [
            "entitled-bench restart  \(report.startedAt)",
            "machine: \(machine.cpus) cores, \(machine.memoryGiB) GiB, \(machine.kernel); \(report.redisVersion)",
            "load: \(Format.grouped(Double(report.users))) users, one membership each (as `memory` loads them), then a snapshot "
                + "(entitled: the snapshot operation; redis: BGREWRITEAOF, an RDB base), then \(Format.grouped(Double(report.logGrants))) grants "
                + "into the log (redis: its append-only file); fsync no; restarts after kill -9, timed from launch until a check of the last "
                + "user written answers (redis: EXISTS), medians of \(report.runs)",
            "",
        ]
        func row(_ name: String, _ value: (RestartMeasurements) -> Double?, decimals: Int = 2, unit: String) -> [String] {
            let (e, r) = (value(entitled), value(redis))
            let show = { (number: Double?) in number.map { Format.fixed($0, decimals) + unit } ?? "–" }
            return [name, show(e), show(r), RestartReport.ratio(e, r).map { Format.fixed($0, 2) + "×" } ?? "–"]
        }
        let medianOrNil = { (values: [Double]) in values.isEmpty ? nil : median(values) }
        var rows = [
            ["measure", "entitled", "redis", "ratio"],
            row("bulk load", { $0.load?.grantsPerSecond }, decimals: 0, unit: " grants/s"),
            row("server CPU per grant", { $0.load?.serverCPUMicrosecondsPerGrant }, unit: " µs"),
            row("snapshot", { $0.snapshotSeconds }, unit: " s"),
            row("snapshot size", { $0.snapshotBytes.map { Double($0) / 1_048_576 } }, decimals: 1, unit: " MiB"),
            row("restart from the snapshot", { medianOrNil($0.fromSnapshot) }, unit: " s"),
        ]
        if report.logGrants > 0 {
            rows += [
                row("log grants: server CPU per grant", { $0.logLoad?.serverCPUMicrosecondsPerGrant }, unit: " µs"),
                row("restart from the snapshot and log", { medianOrNil($0.fromSnapshotAndLog) }, unit: " s"),
            ]
        }
        lines += Format.columns(rows) { $0 > 0 }
        lines.append("")
        lines.append("ratio: entitled's over redis's. Each restart: entitled \(list(entitled.fromSnapshot)) / \(list(entitled.fromSnapshotAndLog)), redis \(list(redis.fromSnapshot)) / \(list(redis.fromSnapshotAndLog)) (from the snapshot / and log)")
        return lines.joined(separator: "\n")
    }

    private static func list(_ seconds: [Double]) -> String {
        seconds.isEmpty ? "–" : seconds.map { Format.fixed($0, 2) }.joined(separator: " ")
    }
}
