import Foundation

/// Finds the programs the benchmark runs; a missing one is an error naming the fix.
enum Executables {
    /// `entitled` (a path), or the one beside this tool.
    static func entitled(_ path: String?) throws -> String {
        let path = path ?? besideThisTool("entitled")
        guard isExecutable(path) else {
            throw BenchError(
                "no entitled binary at \(path); build it next to this tool (swift build -c release --product entitled, with the same --scratch-path) or pass --entitled PATH"
            )
        }
        return path
    }

    /// The entitled binary (as `entitled(_:)`) and redis-server (`redisServer`, a path or a name on PATH).
    static func servers(entitled path: String?, redisServer: String) throws -> (entitled: String, redis: String) {
        let entitledPath = try entitled(path)
        guard let redisPath = find(redisServer) else {
            throw BenchError("no \(redisServer) found: install it (apt-get install -y redis-server) or pass --redis-server PATH")
        }
        return (entitledPath, redisPath)
    }

    /// The neutral load generator: `loadgen`, or `entitled-loadgen` beside this tool.
    static func loadGenerator(_ loadgen: String?) throws -> String {
        let path = loadgen ?? besideThisTool("entitled-loadgen")
        guard isExecutable(path) else {
            throw BenchError(
                "no entitled-loadgen at \(path); build it next to this tool (swift build -c release --product entitled-loadgen, with the same --scratch-path) or pass --loadgen PATH"
            )
        }
        return path
    }

    /// The redis-benchmark beside `redisServer`, else the one on PATH.
    static func redisBenchmark(besideRedisServer redisServer: String) -> String? {
        let beside = URL(fileURLWithPath: redisServer).deletingLastPathComponent().appendingPathComponent("redis-benchmark").path
        return isExecutable(beside) ? beside : find("redis-benchmark")
    }

    /// `name` in the folder of this executable (the same build folder), from /proc/self/exe.
    private static func besideThisTool(_ name: String) -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// `name` itself when it contains a slash, else its first executable match on PATH.
    static func find(_ name: String) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first(where: isExecutable)
    }

    static func isExecutable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue && access(path, X_OK) == 0
    }
}
