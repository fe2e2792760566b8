import Foundation

/// Drives a server with `entitled-loadgen`, the neutral generator in C (one thread, epoll, no spinning,
/// request bytes made in advance), and reads the server's CPU time over exactly the window the generator
/// measured: the figure that does not depend on how much CPU the client itself takes.
struct NeutralLoad {
    /// The generator's executable, and where its request files go.
    let binary, directory: String
    /// Requests written per file: each connection goes round them from its own starting point.
    static let requestsPerFile = 65_536

    /// Runs `shape` against `server`: warm-up, then the measured window.
    func measure(_ server: Server, shape: LoadShape, warmup: Double, duration: Double, seed: UInt64) throws -> LoadOutcome {
        var chooser = KeyChooser(users: shape.users, distribution: shape.distribution, seed: seed)
        let requests = LoadRequests(target: server.target)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.requestsPerFile * 64)
        // The generator's file format: a kind byte, the request, a NUL.
        for _ in 0..<Self.requestsPerFile {
            let kind: RequestKind = chooser.percent() < shape.mix.grantPercent ? .grant : .check
            bytes.append(kind == .grant ? UInt8(ascii: "g") : UInt8(ascii: "c"))
            if kind == .grant {
                requests.appendMixedGrant(user: chooser.next(), to: &bytes)
            } else {
                requests.append(kind, user: chooser.next(), to: &bytes)
            }
            bytes.append(0)
        }
        return try run(
            server, connections: shape.connections, pipeline: shape.pipeline, warmup: warmup, duration: duration, requests: bytes,
            file: "requests-\(server.target.rawValue)-\(seed).bin"
        )
    }

    /// Durable writes: every request a grant (entitled) or `SADD` (Redis) of a user never seen before, one in
    /// flight per connection. The generator numbers the users itself (the request's `############`), so that
    /// no write repeats one: Redis logs nothing for an `SADD` that adds nothing. Several generators at once
    /// (one per node of a cluster) each take users of their own from `firstUser`.
    func measureNewUsers(_ server: Server, connections: Int, warmup: Double, duration: Double, firstUser: UInt64 = 0) throws -> LoadOutcome {
        var grant: [UInt8] = []
        LoadRequests(target: server.target).append(.grant, user: 0, to: &grant)
        // The user number (twelve zeros) becomes the generator's placeholder.
        let request = String(decoding: grant, as: UTF8.self).replacingOccurrences(of: "000000000000", with: "############")
        return try run(
            server, connections: connections, pipeline: 1, warmup: warmup, duration: duration, requests: Array(("g" + request + "\0").utf8),
            file: "new-users-\(server.target.rawValue)-\(firstUser).bin", extraArguments: ["--first-user", String(firstUser)]
        )
    }

    private func run(
        _ server: Server, connections: Int, pipeline: Int, warmup: Double, duration: Double, requests: [UInt8], file: String, extraArguments: [String] = []
    ) throws -> LoadOutcome {
        let requestsFile = "\(directory)/\(file)"
        guard FileManager.default.createFile(atPath: requestsFile, contents: Data(requests)) else {
            throw BenchError("cannot write the request file \(requestsFile)")
        }
        defer { try? FileManager.default.removeItem(atPath: requestsFile) }
        let arguments = [
            "--port", String(server.port), "--connections", String(connections), "--pipeline", String(pipeline), "--warmup", String(warmup),
            "--duration", String(duration), "--protocol", server.target.rawValue, "--requests", requestsFile,
        ]
        let generator = try ChildProcess.launch(binary, arguments + extraArguments, name: "entitled-loadgen")
        defer { generator.stop(signal: SIGKILL, timeout: 5) }
        _ = try generator.waitForOutputLine(containing: "measuring", timeout: warmup + 30)
        let before = (server: CPUMeter.processSeconds(server.pid), generator: CPUMeter.processSeconds(generator.pid))
        _ = try generator.waitForOutputLine(containing: "done", timeout: duration + 30)
        let after = (server: CPUMeter.processSeconds(server.pid), generator: CPUMeter.processSeconds(generator.pid))
        guard generator.waitForExit(timeout: 30), generator.exitDescription == "exit 0" else {
            throw BenchError("entitled-loadgen ended with \(generator.exitDescription): \(generator.errorOutput.text)")
        }
        // The report's last lines may still be in the pipe when the process has exited: read to its end.
        generator.output.waitUntilFinished(timeout: 10)
        var outcome = try Self.parse(generator.output.text)
        if let start = before.server, let end = after.server { outcome.serverCPUSeconds = end - start }
        if let start = before.generator, let end = after.generator { outcome.generatorCPUSeconds = end - start }
        return outcome
    }

    /// The generator's report (see Tools/entitled-loadgen/main.c).
    static func parse(_ text: String) throws -> LoadOutcome {
        var outcome = LoadOutcome()
        var sawWindow = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2 else { continue }
            let value = fields[1]
            switch fields[0] {
            case "window_ns":
                outcome.windowSeconds = Double(UInt64(value) ?? 0) / 1e9
                sawWindow = true
            case "answered": outcome.answered = Int(value) ?? 0
            case "errors": outcome.errors = Int(value) ?? 0
            case "inactive": outcome.inactive = Int(value) ?? 0
            case "first_error": outcome.firstError = String(value)
            case "latency", "check_latency":
                let pair = value.split(separator: " ")
                guard pair.count == 2, let nanoseconds = UInt64(pair[0]), let count = UInt64(pair[1]) else { continue }
                _ = fields[0] == "latency"
                    ? outcome.histogram.record(max(1, nanoseconds), count: count) : outcome.checkHistogram.record(max(1, nanoseconds), count: count)
            default: continue
            }
        }
        guard sawWindow else { throw BenchError("entitled-loadgen printed no report: \(text.suffix(500))") }
        return outcome
    }
}
