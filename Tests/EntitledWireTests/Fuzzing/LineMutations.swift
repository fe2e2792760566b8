/// Lines with one to three bytes replaced, inserted or removed (from `alphabet`, at random positions):
/// what the compact decoders' tests feed both decoders, to find a line the compact one reads otherwise.
struct LineMutations: Sequence, IteratorProtocol {
    private let lines: [[UInt8]]
    private let alphabet: [UInt8]
    private let rounds: Int
    private var round = 0
    private var random: SplitMix64

    /// `rounds` mutated lines, going round `lines` in order, drawn from `seed`.
    init(of lines: [String], alphabet: [UInt8], rounds: Int, seed: UInt64) {
        self.lines = lines.map { Array($0.utf8) }
        self.alphabet = alphabet
        self.rounds = rounds
        self.random = SplitMix64(seed: seed)
    }

    mutating func next() -> [UInt8]? {
        guard round < rounds else { return nil }
        var bytes = lines[round % lines.count]
        round += 1
        for _ in 0...Int(random.next() % 3) {
            let position = Int(random.next() % UInt64(bytes.count + 1))
            let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
            switch random.next() % 3 {
            case 0 where position < bytes.count: bytes[position] = byte
            case 1: bytes.insert(byte, at: position)
            default: if position < bytes.count { bytes.remove(at: position) }
            }
        }
        return bytes
    }
}
