import Foundation

/// One run of `redis-benchmark`: the yardstick for the load generator, which must drive Redis at least
/// as fast as it does.
struct RedisBenchmarkRun {
    /// What `redis-benchmark --csv` reported.
    struct Result {
        let requestsPerSecond: Double
        let p50Ms, p99Ms: Double?
    }

    let port: UInt16
    /// `keyRange`: `-r`, the range `__rand_int__` is drawn from, where the key number goes in `command`.
    let connections, pipeline, requests, keyRange: Int
    let command: [String]

    /// Runs it to the end (at most 10 minutes) and reads its CSV line.
    func run(binary: String) throws -> Result {
        let arguments = ["-p", "\(port)", "-c", "\(connections)", "-P", "\(pipeline)", "-n", "\(requests)", "-r", "\(keyRange)", "--threads", "1", "--csv"]
        let process = try ChildProcess.launch(binary, arguments + command, name: "redis-benchmark")
        guard process.waitForExit(timeout: 600) else {
            process.stop(signal: SIGKILL)
            throw BenchError("redis-benchmark did not finish")
        }
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        // "SADD ents:__rand_int__ pro","50377.83","0.910","0.240","0.871","1.327","1.655","4.455"
        process.output.waitUntilFinished(timeout: 10)
        process.errorOutput.waitUntilFinished(timeout: 10)
        let text = process.output.text
        guard let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last(where: { !$0.hasPrefix("\"test\"") && $0.hasPrefix("\"") }) else {
            throw BenchError("redis-benchmark printed no result (\(process.exitDescription)): \(text.suffix(300)) \(process.errorOutput.text.suffix(300))")
        }
        let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        guard fields.count >= 7, let rate = Double(fields[fields.count - 7]) else { throw BenchError("redis-benchmark printed an unexpected line: \(line)") }
        return Result(requestsPerSecond: rate, p50Ms: Double(fields[fields.count - 4]), p99Ms: Double(fields[fields.count - 2]))
    }
}
