/// xorshift64: the benchmark's random numbers, fast, with no allocation and no lock (one per thread), and
/// seeded, so that a run's requests can be made again.
struct Xorshift: Sendable {
    private var state: UInt64

    /// Any seed gives a usable, non-zero state.
    init(seed: UInt64) {
        state = (seed &* 0x9E37_79B9_7F4A_7C15) | 1
    }

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
