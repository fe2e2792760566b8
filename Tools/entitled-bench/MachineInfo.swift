import Foundation

/// Facts about the machine for the report: the numbers mean little without them.
struct MachineInfo: Codable {
    let cpus: Int
    let kernel: String
    let memoryGiB: Double
    /// The file system the servers write to (fsync on tmpfs would be free).
    let workFileSystem: String

    static func current(workDirectory: String) -> MachineInfo {
        var names = utsname()
        uname(&names)
        let release = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let system = withUnsafeBytes(of: &names.sysname) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return MachineInfo(
            cpus: ProcessInfo.processInfo.activeProcessorCount, kernel: "\(system) \(release)",
            memoryGiB: (Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30) * 10).rounded() / 10,
            workFileSystem: fileSystemType(of: workDirectory)
        )
    }

    /// The type of the file system holding `path`, from /proc/self/mounts (the longest matching mount).
    private static func fileSystemType(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mountPoint: String, type: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mountPoint = String(fields[1])
            let inside = resolved == mountPoint || resolved.hasPrefix(mountPoint == "/" ? "/" : mountPoint + "/")
            if inside && mountPoint.count >= (best?.mountPoint.count ?? -1) { best = (mountPoint, String(fields[2])) }
        }
        return best.map { "\($0.type) (\($0.mountPoint))" } ?? "unknown"
    }
}
