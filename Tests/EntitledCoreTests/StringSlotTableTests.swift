import Foundation
import Testing

@testable import EntitledCore

/// `StringSlotTable` against `Dictionary`, the model it replaces: the same answers after any sequence of
/// inserts, updates and removals.
@Suite struct StringSlotTableTests {
    /// Keys of every kind the store sees: short (stored in the String itself), long (on the heap),
    /// non-ASCII, the empty string, and ids that differ only in their last byte.
    private static func key(_ number: Int) -> String {
        switch number % 5 {
        case 0: "u\(number)"
        case 1: "device-\(number)-with-an-identifier-long-enough-for-the-heap"
        case 2: "ünïcødé-\(number)"
        case 3: String(format: "%012d", number)
        default: number == 4 ? "" : "user_\(number)"
        }
    }

    @Test func randomInsertsUpdatesAndRemovalsAnswerAsADictionaryDoes() {
        var table = StringSlotTable()
        var model: [String: Int32] = [:]
        var seed: UInt64 = 0x5EED
        func next(_ bound: Int) -> Int {
            // A fixed sequence (splitmix64), so that a failure replays.
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
        for step in 0..<200_000 {
            let key = Self.key(next(step < 100_000 ? 20_000 : 5_000))
            switch next(12) {
            case 0..<5:
                let value = Int32(next(1_000_000))
                table[key] = value
                model[key] = value
            case 10, 11:
                let value = Int32(next(1_000_000))
                #expect(table.insertIfAbsent(key, value) == model[key], "step \(step), \(key)")
                if model[key] == nil { model[key] = value }
            case 5..<8:
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step), \(key)")
            default:
                table[key] = nil
                model[key] = nil
            }
            if step % 1_000 == 0 {
                #expect(table.count == model.count, "step \(step)")
            }
        }
        #expect(table.count == model.count)
        for number in 0..<20_000 {
            let key = Self.key(number)
            #expect(table[key] == model[key], "\(key)")
        }
    }

    @Test func aTableEmptiedByRemovalsFindsNothingAndTakesKeysAgain() {
        var table = StringSlotTable()
        for number in 0..<10_000 { table[Self.key(number)] = Int32(number) }
        #expect(table.count == 10_000)
        for number in stride(from: 9_999, through: 0, by: -1) {
            #expect(table.removeValue(forKey: Self.key(number)) == Int32(number))
        }
        #expect(table.count == 0)
        #expect(table[Self.key(17)] == nil)
        table[Self.key(17)] = 3
        #expect(table[Self.key(17)] == 3)
        #expect(table.count == 1)
    }

    @Test func theHashOfAKeyDependsOnEveryByteAndItsLength() {
        #expect(StringSlotTable.hash("abcdefgh1") != StringSlotTable.hash("abcdefgh2"))
        #expect(StringSlotTable.hash("a") != StringSlotTable.hash("a\u{0}"))
        #expect(StringSlotTable.hash("") != StringSlotTable.hash("\u{0}"))
        #expect(StringSlotTable.hash("000000012345") == StringSlotTable.hash(String("000000012345")))
    }

    @Test func prefetchingAnyBytesChangesNothing() {
        var table = StringSlotTable()
        Array("u1".utf8).withUnsafeBytes { table.prefetch(utf8: $0) }  // empty: nothing to load
        for number in 0..<1_000 { table[Self.key(number)] = Int32(number) }
        for bytes in [[], Array("u1".utf8), Array(repeating: UInt8(0xFF), count: 300)] as [[UInt8]] {
            bytes.withUnsafeBytes { table.prefetch(utf8: $0) }
        }
        #expect(table.count == 1_000)
        #expect(table[Self.key(1)] == 1)
        #expect(table[Self.key(999)] == 999)
    }
}
