import EntitledCore
import Foundation
import NIOCore
import Testing

@testable import EntitledWire

/// A seeded fuzz of the request decoder: generated lines (mutated valid requests and noise) for a bounded
/// time, each checked against `DecoderProperties`. The seed is fixed, so CI tries the same inputs every
/// run; `ENTITLED_FUZZ_SEED`, `ENTITLED_FUZZ_SECONDS` and `ENTITLED_FUZZ_ITERATIONS` change it
/// (`FuzzSettings`), and every failure names the seed that replays it and the input itself.
@Suite("The request decoder, fuzzed")
struct RequestDecoderFuzzTests {
    @Test func everyTemplateDecodesAndTogetherTheyCoverEveryOperationAndField() throws {
        var random = SplitMix64(seed: 1)
        var operations: Set<Request.Operation> = []
        for template in RequestTemplates.all {
            let line = FuzzValue.object(RequestTemplates.members(of: template)).rendered(random: &random)
            let request = try #require(
                try? RequestDecoder.decode(line: ByteBuffer(bytes: line)).result.get(),
                "template refused: \(DecoderProperties.describe(line))"
            )
            operations.insert(request.op)
        }
        #expect(operations == Set(Request.Operation.allCases))
        let keys = Set(RequestTemplates.all.flatMap { $0.map(\.key) })
        #expect(keys == Set(RequestField.allCases.map(\.description)))
    }

    /// The oracle's one allowance for Foundation: numbers a `Double` cannot hold, outside strings, and
    /// nothing else.
    @Test func theOracleTamesOnlyNumbersADoubleCannotHold() {
        let line = Array(#"{"a":1e400,"b":"1e400 \"-1e400","c":[-1e400,1.5,-0,1e-400],"d":true}"#.utf8)
        let (tamed, replaced) = FoundationJSON.replacingUnrepresentableNumbers(in: line)
        #expect(String(decoding: tamed, as: UTF8.self) == #"{"a":0,"b":"1e400 \"-1e400","c":[0,1.5,-0,1e-400],"d":true}"#)
        #expect(replaced == 2)
        #expect(FoundationJSON.parse(line) is [String: Any])
        #expect(FoundationJSON.parse(Array(#"{"a":1e400"#.utf8)) == nil)
    }

    @Test func theSameSeedGivesTheSameLines() {
        var first = RequestLineGenerator(seed: 42)
        var second = RequestLineGenerator(seed: 42)
        for _ in 0..<500 {
            #expect(first.next() == second.next())
        }
    }

    @Test func generatedLinesNeverBreakTheDecodersProperties() throws {
        let settings = try FuzzSettings.fromEnvironment()
        var lines = RequestLineGenerator(seed: settings.seed)
        // A second stream for the permissions, so that the lines do not depend on them.
        var random = SplitMix64(seed: settings.seed ^ 0x7065_726D_6973_7369)
        var properties = DecoderProperties()
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int(settings.seconds * 1000))
        var iterations = 0
        var failures = 0
        while iterations < settings.maximumIterations {
            // The clock is read every 64 inputs: reading it costs more than deciding most of them.
            if iterations >= FuzzSettings.minimumIterations, iterations % 64 == 0, clock.now >= deadline { break }
            let line = lines.next()
            let permissions = Self.permissions(random: &random)
            iterations += 1
            let problems = properties.violations(of: line, permitting: permissions)
            guard !problems.isEmpty else { continue }
            failures += 1
            Issue.record(
                """
                input #\(iterations) (\(settings.replayHint(stoppingAt: iterations))), permitting \(permissions.operations.map(\.rawValue)) \
                else \(permissions.refusalCode.rawValue):
                \(DecoderProperties.describe(line))
                \(problems.joined(separator: "\n"))
                """
            )
            if failures == 20 { break }  // enough to go on; the rest are likely the same bug
        }
        let seconds = (clock.now - start) / .seconds(1)
        let rate = Int(Double(iterations) / max(seconds, 0.001))
        print(
            "RequestDecoder fuzz: \(iterations) inputs in \(String(format: "%.1f", seconds)) s (\(rate)/s), \(properties.compactChecks) read by the compact check decoder too, \(settings)"
        )

        // The inputs reached every operation and every refusal the decoder makes: a generator that
        // drifted into producing only noise would otherwise pass unnoticed. (Not when told to try fewer
        // inputs than that takes.)
        guard iterations >= FuzzSettings.minimumIterations else { return }
        #expect(properties.acceptedOperations == Set(Request.Operation.allCases), "\(settings)")
        #expect(properties.compactChecks > 0, "no input took the compact check decoder's path (\(settings))")
        #expect(
            properties.refusalCodes.isSuperset(of: [.badJSON, .badRequest, .unknownOp, .unauthorized, .forbidden]),
            "\(properties.refusalCodes) (\(settings))"
        )
    }

    /// Everything most of the time, as an open server; otherwise a random subset of the operations,
    /// refused as an unauthenticated connection (`unauthorized`) or a narrow role (`forbidden`) is.
    private static func permissions(random: inout SplitMix64) -> OperationPermissions {
        guard random.percent(15) else { return .everything }
        let allowed = Request.Operation.allCases.filter { _ in random.percent(50) }
        return OperationPermissions(allowing: allowed, refusalCode: random.percent(50) ? .unauthorized : .forbidden)
    }
}
