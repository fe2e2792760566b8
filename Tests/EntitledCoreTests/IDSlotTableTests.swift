import Testing

@testable import EntitledCore

/// `IDSlotTable` against `Dictionary`, the model it replaces: the same answers after any sequence of
/// inserts and removals, the id 0 (which marks empty entries) included, and chains that wrap around.
@Suite struct IDSlotTableTests {
    @Test func randomInsertsAndRemovalsAnswerAsADictionaryDoes() {
        var table = IDSlotTable()
        var model: [UInt64: UInt32] = [:]
        var seed: UInt64 = 0x1D5
        func next() -> UInt64 {
            // A fixed sequence (splitmix64), so that a failure replays.
            seed &+= 0x9E37_79B9_7F4A_7C15
            var z = seed
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        // Ids from a small range collide often in a small table; 0 and all-ones are among them; the high
        // half alone tells some apart.
        func id() -> UInt64 {
            switch next() % 4 {
            case 0: next() % 3_000
            case 1: (next() % 3_000) << 32
            case 2: UInt64.max - next() % 3
            default: next()
            }
        }
        for step in 0..<200_000 {
            let key = id()
            if next() % 3 == 0 {
                #expect(table.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step)")
            } else {
                let slot = UInt32(truncatingIfNeeded: next())
                let previous = table.insertIfAbsent(key, slot: slot)
                #expect(previous == model[key], "step \(step)")
                if previous == nil { model[key] = slot }
            }
            #expect(table.count == model.count)
        }
        for (key, slot) in model { #expect(table[key] == slot) }
        for _ in 0..<10_000 {
            let key = next()
            #expect(table[key] == model[key])
        }
    }

    @Test func aReservedTableHoldsTheIdsWithoutLosingAny() {
        var table = IDSlotTable()
        table.reserveCapacity(100_000)
        for slot in 0..<100_000 { #expect(table.insertIfAbsent(UInt64(slot) &* 0x9E37_79B9_7F4A_7C15, slot: UInt32(slot)) == nil) }
        table.prefetch(12)
        #expect(table.count == 100_000)
        for slot in stride(from: 0, to: 100_000, by: 7) { #expect(table[UInt64(slot) &* 0x9E37_79B9_7F4A_7C15] == UInt32(slot)) }
        #expect(table[1] == nil)
    }
}
