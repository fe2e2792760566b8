import EntitledCore
import EntitledServer
import EntitledTestSupport
import Foundation
import NIOCore
import Testing

@Suite("Whatever a client sends, the processor answers one valid JSON line")
struct RequestProcessorRobustnessTests {
    static let validLines = [
        #"{"op":"ping","id":1}"#,
        #"{"op":"grant","user":"u1","device":"d1","product":"prod_pro","plan":"plan_m","duration":"30d","source":"stripe"}"#,
        #"{"op":"grant","device":"d1","product":"prod_pro","expiresAt":"2027-01-01T00:00:00Z","id":{"k":[1,2.5e3,null,true]}}"#,
        #"{"op":"check","user":"u1","device":"d1","entitlement":"pro","at":"2026-12-01T00:00:00.5+01:00"}"#,
        #"{"op":"check","user":"u\u00e9\ud83d\ude00","product":"prod_pro"}"#,
        #"{"op":"claim","device":"d1","user":"u1"}"#,
        #"{"op":"revoke","membership":"mem_0000000000000","reason":"refund"}"#,
        #"{"op":"memberships","user":"u1","device":"d1"}"#,
        #"{"op":"define","entitlement":"pro","products":["prod_pro","prod_pro_y"]}"#,
        #"{"op":"catalog"}"#,
    ]

    /// Answers `line` and checks the answer is exactly one line holding a JSON object with a boolean `ok`.
    static func expectOneValidResponse(to line: [UInt8], processor: RequestProcessor) {
        var output = ByteBuffer()
        processor.respond(to: ByteBuffer(bytes: line), into: &output)
        let text = String(buffer: output)
        let newlines = text.utf8.filter { $0 == UInt8(ascii: "\n") }.count
        #expect(newlines == 1 && text.hasSuffix("\n"), "not one line for input \(line): \(text)")
        let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(object?["ok"] is Bool, "not a valid response for input \(line): \(text)")
    }

    @Test func mutatedValidRequestsNeverBreakTheResponseFraming() {
        let processor = RequestProcessor(store: EntitlementStore())
        var random = SeededRandom(seed: 20261122)
        for _ in 0..<20_000 {
            var bytes = Array(Self.validLines.randomElement(using: &random)!.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<max(bytes.count, 1), using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1 where !bytes.isEmpty: bytes.remove(at: position)
                case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: min(position, bytes.count))
                default: bytes = Array(bytes.prefix(position))
                }
            }
            bytes.removeAll { $0 == UInt8(ascii: "\n") }  // the framing layer never passes a newline on
            Self.expectOneValidResponse(to: bytes, processor: processor)
        }
    }

    @Test func randomBytesNeverBreakTheResponseFraming() {
        let processor = RequestProcessor(store: EntitlementStore())
        var random = SeededRandom(seed: 7117)
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...200, using: &random)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }.filter { $0 != 10 }
            Self.expectOneValidResponse(to: bytes, processor: processor)
        }
    }

    @Test func deeplyNestedValuesAreRefusedWithoutExhaustingTheStack() {
        let processor = RequestProcessor(store: EntitlementStore())
        for depth in [31, 32, 33, 10_000, 100_000] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            Self.expectOneValidResponse(to: Array(#"{"op":"ping","x":\#(nested)}"#.utf8), processor: processor)
            Self.expectOneValidResponse(to: Array(#"{"op":"ping","id":\#(nested)}"#.utf8), processor: processor)
        }
    }
}
