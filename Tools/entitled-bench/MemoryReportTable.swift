/// The table `entitled-bench memory` prints.
enum MemoryReportTable {
    static func render(_ report: MemoryReport) -> String {
        let (settings, machine) = (report.settings, report.machine)
        var lines = [
            "entitled-bench memory  \(report.startedAt)",
            "machine: \(machine.cpus) cores, \(machine.memoryGiB) GiB, \(machine.kernel); \(settings.redisVersion)",
            "load: \(Format.grouped(Double(settings.users))) users, one membership each (entitled: grant of prod_pro, "
                + "source app_store, expiresAt; redis: HSET m:<user> with id, product, user, source, created_at, expires_at); "
                + "fsync \(settings.fsync); \(settings.connections) connections × \(settings.pipeline) in flight",
            "",
        ]
        let header = ["server", "users", "RSS before", "RSS after", "(after−before)/user", "after/user", "peak RSS", "load"]
        let rows = [("entitled", report.entitled), ("redis", report.redis)].map { name, memory in
            [
                name, Format.grouped(Double(settings.users)), Format.mebibytes(memory.residentBytesBefore), Format.mebibytes(memory.residentBytesAfter),
                bytes(memory.growthBytesPerUser), bytes(memory.residentBytesPerUser), Format.mebibytes(memory.peakResidentBytes),
                "\(Format.fixed(memory.loadSeconds, 2)) s",
            ]
        }
        let ratios = ["entitled / redis", "", "", "", Format.fixed(report.growthRatio, 2) + "×", Format.fixed(report.residentRatio, 2) + "×", "", ""]
        lines += Format.columns([header] + rows + [ratios]) { $0 > 0 }
        lines.append("")
        if let used = report.redisUsedMemoryBytes, let perUser = report.redisUsedMemoryBytesPerUser {
            lines.append(
                "redis used_memory (INFO memory): \(Format.mebibytes(used)) = \(bytes(perUser)) per user "
                    + "(allocator \(report.redisMemoryInfo["mem_allocator"] ?? "?"))"
            )
        }
        lines.append(
            "goal: entitled's (after−before)/user ≤ \(Format.fixed(MemoryReport.goalRatio, 1))× Redis's: \(bytes(report.entitled.growthBytesPerUser)) vs "
                + "\(bytes(report.redis.growthBytesPerUser)) (\(Format.fixed(report.growthRatio, 2))×): \(report.goalMet ? "met" : "MISSED")"
        )
        return lines.joined(separator: "\n")
    }

    private static func bytes(_ value: Double) -> String {
        "\(Format.fixed(value, 1)) B"
    }
}
