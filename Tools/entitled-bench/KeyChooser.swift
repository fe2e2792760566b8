import Foundation

/// Which user each request names: uniform over the loaded users, or skewed as real traffic is.
/// `skewed`: Zipfian with θ = 0.99 (YCSB's default), the ranks scattered over the key space so that the hot
/// users are not neighbours.
enum KeyDistribution: String, Sendable, CaseIterable, Codable {
    case uniform, skewed
}

/// Draws user numbers: random bits shaped by the distribution.
struct KeyChooser {
    private let users: UInt64
    private var random: Xorshift
    private let zipf: Zipfian?

    init(users: Int, distribution: KeyDistribution, seed: UInt64) {
        self.users = UInt64(max(1, users))
        random = Xorshift(seed: seed)
        zipf = distribution == .skewed ? Zipfian(items: max(1, users)) : nil
    }

    /// A number in 0..<users.
    mutating func next() -> Int {
        guard let zipf else { return Int(random.next() % users) }
        let rank = zipf.rank(uniform: Double(random.next() >> 11) / Double(1 << 53))
        // FNV-style scatter of the rank: rank 0 (the hottest) lands anywhere in the key space.
        return Int((UInt64(rank) &* 0x100_0000_01B3 ^ 0xCBF2_9CE4_8422_2325) % users)
    }

    /// A number in 0..<100, for the operation mix.
    mutating func percent() -> Int { Int(random.next() % 100) }
}

/// The Zipfian generator of Gray et al. ("Quickly generating billion-record synthetic databases"), as YCSB
/// uses it: ζ(n) is computed once, then each draw is constant time.
struct Zipfian: Sendable {
    let items: Int
    let theta = 0.99
    private let alpha: Double
    private let zetaN: Double
    private let eta: Double
    private let zeta2: Double

    init(items: Int) {
        self.items = items
        let theta = self.theta
        zetaN = (1...items).reduce(0.0) { $0 + 1 / pow(Double($1), theta) }
        zeta2 = 1 + 1 / pow(2, theta)
        alpha = 1 / (1 - theta)
        eta = (1 - pow(2 / Double(items), 1 - theta)) / (1 - zeta2 / zetaN)
    }

    /// The rank (0 is the most frequent) for a uniform draw in [0, 1).
    func rank(uniform u: Double) -> Int {
        let uz = u * zetaN
        if uz < 1 { return 0 }
        if uz < zeta2 { return 1 }
        return min(items - 1, Int(Double(items) * pow(eta * u - eta + 1, alpha)))
    }
}
