import Foundation

/// Finds the programs the benchmark runs; a missing one is an error naming the fix.
enum Executables {
    /// `entitled` (a path), or the one beside this tool.
    static func entitled(_ path: String?) throws -> String {
        try product("entitled", path, option: "--entitled")
    }

    /// The neutral load generator: `path`, or `entitled-loadgen` beside this tool.
    static func loadGenerator(_ path: String?) throws -> String {
        try product("entitled-loadgen", path, option: "--loadgen")
    }

    /// redis-server: `name`, a path or a name on PATH.
    static func redisServer(_ name: String) throws -> String {
        guard let path = find(name) else { throw BenchError("no \(name) found: install it (apt-get install -y redis-server) or pass --redis-server PATH") }
        return path
    }

    /// `path`, or the package's `product` in the folder of this executable (the same build folder, from /proc/self/exe).
    private static func product(_ product: String, _ path: String?, option: String) throws -> String {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let path = path ?? URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent(product).path
        guard isExecutable(path) else {
            throw BenchError(
                "no \(product) at \(path); build it next to this tool (swift build -c release --product \(product), with the same --scratch-path) or pass \(option) PATH"
            )
        }
        return path
    }

    /// `name` itself when it contains a slash, else its first executable match on PATH.
    static func find(_ name: String) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first(where: isExecutable)
    }

    private static func isExecutable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue && access(path, X_OK) == 0
    }
}
