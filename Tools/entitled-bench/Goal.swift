/// A goal and whether this run met it (nil: it could not be measured).
struct Goal: Codable {
    let name, target, measured: String
    let met: Bool?

    /// `durability`'s goals, judged on this run's numbers.
    static func judging(_ report: DurabilityReport) -> [Goal] {
        let x = { (ratio: Double) in Format.fixed(ratio, 2) + "×" }
        let seconds = { (value: Double?) in value.map { "\(Format.fixed($0, 3)) s" } ?? "—" }
        var goals: [Goal] = []
        if let writes = report.writes, let most = report.settings.connections.max() {
            let ratio = writes.ratios.first { $0.connections == most }?.entitledOverRedis
            // With --ceiling, what no sync at all would give, so that a reader sees how much room is left.
            let ceiling = writes.ceilings.first { $0.connections == most }.map { " (no sync at all: \(x($0.entitledUnsyncedOverRedis)))" } ?? ""
            let measured = ratio.map { x($0) + ceiling } ?? "—"
            goals.append(Goal(name: "durable writes at \(most) conns vs Redis", target: "≥ 1.50×", measured: measured, met: ratio.map { $0 >= 1.5 }))
        }
        guard let snapshot = report.snapshot else { return goals }
        let slowest = [snapshot.firstSnapshot, snapshot.secondSnapshot].compactMap { $0?.serverMs }.max().map { Double($0) / 1000 }
        let recovery = snapshot.recoveryMedianSeconds
        goals += [
            Goal(
                name: "snapshot of \(Format.grouped(Double(snapshot.memberships))) memberships (slower of 2)", target: "< 3 s", measured: seconds(slowest),
                met: slowest.map { $0 < 3 }
            ),
            Goal(name: "recovery, snapshot + log (median launch→ready)", target: "< 3 s", measured: seconds(recovery), met: recovery.map { $0 < 3 }),
        ]
        guard let without = snapshot.checksWithoutSnapshot?.latency, let during = snapshot.checksDuringSnapshot else { return goals }
        let ratio = without.p99Ms > 0 ? during.latency.p99Ms / without.p99Ms : nil
        let clean = during.errors == 0 && during.inactive == 0
        let p99 = ratio.map { "\(x($0)) (\(Format.fixed(during.latency.p99Ms, 3)) / \(Format.fixed(without.p99Ms, 3)) ms)" } ?? "—"
        let p999 = "\(Format.fixed(during.latency.p999Ms, 2)) ms (\(Format.fixed(without.p999Ms, 2)))"
        return goals + [
            Goal(name: "check p99 during snapshot vs without", target: "≤ 1.30×", measured: p99, met: ratio.map { $0 <= 1.3 && clean }),
            Goal(name: "check p99.9 during snapshot (without)", target: "reported", measured: p999, met: clean && during.latency.count > 0),
        ]
    }
}
