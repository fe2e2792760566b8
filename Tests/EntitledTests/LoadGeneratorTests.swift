import EntitledClient
import EntitledTestSupport
import Foundation
import Testing

/// `entitled-loadgen`, the benchmark's C load generator, against a real server: what the benchmark's
/// numbers rest on (every answer counted once, classified as the server meant it, the window reported)
/// is proved here; how fast anything is stays the benchmark's business.
@Suite struct LoadGeneratorTests {
    @Test func itCountsEveryAnswerOnceAndClassifiesActiveInactiveAndErrors() async throws {
        let server = try RunningEntitled()
        let setup = try await EntitledAsyncConnection.connect(to: .tcp(host: "127.0.0.1", port: server.port))
        _ = try await setup.send(line: #"{"op":"grant","user":"000000000001","product":"prod_pro"}"#)
        _ = try await setup.send(line: #"{"op":"define","entitlement":"pro","products":["prod_pro"]}"#)

        // One active check, one inactive, one the server refuses (an unknown field): a third each.
        let directory = try TemporaryDirectory()
        let requests = [
            #"{"op":"check","user":"000000000001","entitlement":"pro"}"#,
            #"{"op":"check","user":"000000000002","entitlement":"pro"}"#,
            #"{"op":"check","user":"000000000001","entitlment":"pro"}"#,
        ]
        var file = Data()
        for request in requests { file += Data(("c" + request + "\n").utf8) + Data([0]) }
        let path = directory.path + "/requests.bin"
        try file.write(to: URL(fileURLWithPath: path))

        let generator = Process()
        generator.executableURL = ServerProcess.builtExecutable(named: "entitled-loadgen")
        generator.arguments = [
            "--port", String(server.port), "--connections", "3", "--pipeline", "4", "--warmup", "0.2", "--duration", "0.5",
            "--protocol", "entitled", "--requests", path,
        ]
        let output = Pipe()
        generator.standardOutput = output
        try generator.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        generator.waitUntilExit()
        #expect(generator.terminationStatus == 0, "\(text)")

        let report = Dictionary(
            text.split(separator: "\n").compactMap { line -> (String, String)? in
                let parts = line.split(separator: " ", maxSplits: 1)
                return parts.count == 2 && parts[0] != "latency" ? (String(parts[0]), String(parts[1])) : nil
            },
            uniquingKeysWith: { first, _ in first }
        )
        let lines = text.split(separator: "\n")
        #expect(lines.first == "measuring" && lines.dropFirst().first == "done", "\(text.prefix(200))")
        let answered = Int(report["answered"] ?? "") ?? 0
        let inactive = Int(report["inactive"] ?? "") ?? 0
        let errors = Int(report["errors"] ?? "") ?? 0
        #expect(answered > 30, "\(text.prefix(300))")
        // Connections go round the three requests in step, each answer matched to its own request: every
        // kind is about a third (a batch of 4 over 3 kinds skews a window's ends by a few).
        #expect(abs(inactive * 3 - answered) <= answered / 5 + 12, "inactive \(inactive) of \(answered)")
        #expect(abs(errors * 3 - answered) <= answered / 5 + 12, "errors \(errors) of \(answered)")
        #expect(report["first_error"]?.contains("unknown field") == true, "\(report["first_error"] ?? "none")")
        let window = Double(report["window_ns"] ?? "") ?? 0
        #expect(window >= 0.5e9 && window < 5e9, "window \(window) ns")
        // The latency buckets hold exactly the answers counted.
        let recorded = lines.filter { $0.hasPrefix("latency ") }.compactMap { Int($0.split(separator: " ")[2]) }.reduce(0, +)
        #expect(recorded == answered)

        // The server agrees about what it answered in the window and around it.
        let stats = try await setup.send(line: #"{"op":"stats"}"#)
        #expect((stats["requests"]?["total"]?.intValue ?? 0) >= answered + 2)
        await setup.close()
    }

    @Test func aMalformedRequestFileIsRefusedWithAClearMessage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/requests.bin"
        try Data("c{\"op\":\"ping\"}\n".utf8).write(to: URL(fileURLWithPath: path))  // no NUL at the end
        let generator = Process()
        generator.executableURL = ServerProcess.builtExecutable(named: "entitled-loadgen")
        generator.arguments = ["--port", "9", "--connections", "1", "--pipeline", "1", "--duration", "1", "--requests", path]
        let errors = Pipe()
        generator.standardError = errors
        try generator.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        generator.waitUntilExit()
        #expect(generator.terminationStatus == 1)
        #expect(text.contains("requests file is malformed"), "\(text)")
    }
}
