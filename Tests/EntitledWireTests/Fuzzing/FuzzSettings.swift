import Foundation

/// How long a fuzz test runs and from which seed, read from the environment so that CI can give it a
/// budget and a person can replay a failure:
///
/// - `ENTITLED_FUZZ_SEED`: the seed (decimal, or hexadecimal with `0x`); a fixed one by default, so that
///   every run of the suite tries the same inputs unless told otherwise.
/// - `ENTITLED_FUZZ_SECONDS`: the wall-clock budget, 5 seconds by default (a bounded share of CI; run longer by hand with a new seed).
/// - `ENTITLED_FUZZ_ITERATIONS`: the most inputs to try, whatever the budget (1,000,000 by default).
///
/// `minimumIterations` are always run, however small the budget: the test's coverage checks count on them.
struct FuzzSettings: CustomStringConvertible {
    static let defaultSeed: UInt64 = 0x656E_7469_746C_6564  // "entitled" in ASCII
    static let minimumIterations = 5_000

    var seed: UInt64
    var seconds: Double
    var maximumIterations: Int

    /// The settings the environment asks for; throws for a value that is set but unreadable, rather
    /// than fuzzing with a seed nobody chose.
    static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> FuzzSettings {
        var settings = FuzzSettings(seed: defaultSeed, seconds: 5, maximumIterations: 1_000_000)
        if let text = environment["ENTITLED_FUZZ_SEED"] {
            let parsed = text.lowercased().hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
            guard let parsed else { throw UnreadableSetting(name: "ENTITLED_FUZZ_SEED", value: text) }
            settings.seed = parsed
        }
        if let text = environment["ENTITLED_FUZZ_SECONDS"] {
            guard let parsed = Double(text), parsed >= 0, parsed.isFinite else {
                throw UnreadableSetting(name: "ENTITLED_FUZZ_SECONDS", value: text)
            }
            settings.seconds = parsed
        }
        if let text = environment["ENTITLED_FUZZ_ITERATIONS"] {
            guard let parsed = Int(text), parsed > 0 else { throw UnreadableSetting(name: "ENTITLED_FUZZ_ITERATIONS", value: text) }
            settings.maximumIterations = parsed
        }
        return settings
    }

    /// How a person replays the run up to input `number` (counted from 1), and stops there: the inputs
    /// depend only on the seed, so the same seed makes the same `number`th input whatever the machine.
    func replayHint(stoppingAt number: Int) -> String {
        "replay with ENTITLED_FUZZ_SEED=0x\(String(seed, radix: 16)) ENTITLED_FUZZ_ITERATIONS=\(number) ENTITLED_FUZZ_SECONDS=600"
    }

    var description: String {
        "seed 0x\(String(seed, radix: 16)), budget \(seconds) s or \(maximumIterations) inputs"
    }

    struct UnreadableSetting: Error, CustomStringConvertible {
        var name: String
        var value: String
        var description: String { "\(name)=\(value) is not a valid value" }
    }
}
