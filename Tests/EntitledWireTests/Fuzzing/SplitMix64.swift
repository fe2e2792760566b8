/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny seeded random number generator, so that a fuzz run is
/// the same sequence of inputs every time it starts from the same seed.
///
/// Not `SystemRandomNumberGenerator`: its sequence cannot be replayed, and a failure found once must be
/// found again to be fixed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number from 0 up to, not including, `bound` (which must be positive).
    mutating func below(_ bound: Int) -> Int {
        Int.random(in: 0..<bound, using: &self)
    }

    /// A number in `range`.
    mutating func number(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// `true` with probability `percent` in 100.
    mutating func percent(_ percent: Int) -> Bool {
        below(100) < percent
    }

    /// One element of a non-empty array.
    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[below(elements.count)]
    }

    /// A byte of any value.
    mutating func byte() -> UInt8 {
        UInt8(truncatingIfNeeded: next())
    }
}
