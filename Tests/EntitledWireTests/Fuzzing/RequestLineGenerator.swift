/// Makes the request lines of the decoder fuzz, all from one seeded generator: mostly valid requests
/// mutated with knowledge of their structure (a field dropped, repeated, retyped, nested, given a hostile
/// value), some of them then mutated byte by byte, and some lines of pure noise.
struct RequestLineGenerator {
    private(set) var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    /// The next line (without a `\n` at its end: the framing strips it).
    mutating func next() -> [UInt8] {
        switch random.below(100) {
        case 0..<6: return randomBytes()
        case 6..<10: return jsonishNoise()
        default: return mutatedRequest()
        }
    }

    // MARK: Noise

    /// Bytes of any value: a decoder must survive what no client would send.
    private mutating func randomBytes() -> [UInt8] {
        (0..<random.number(in: 0...200)).map { _ in random.byte() }
    }

    /// Bytes drawn from JSON's own punctuation and literals: noise that gets further into the grammar.
    private mutating func jsonishNoise() -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<random.number(in: 0...40) {
            if random.percent(60) {
                bytes.append(random.pick(NastyFragments.interestingBytes))
            } else {
                bytes += random.pick(NastyFragments.tokens)
            }
        }
        return bytes
    }

    // MARK: Structure-aware mutations

    private mutating func mutatedRequest() -> [UInt8] {
        var members = RequestTemplates.members(of: random.pick(RequestTemplates.all))
        for _ in 0..<random.number(in: 0...4) {
            mutate(&members)
        }
        var line = FuzzValue.object(members).rendered(random: &random, spacing: random.percent(15) ? 30 : 0)
        if random.percent(30) {
            for _ in 0..<random.number(in: 1...4) { mutateBytes(&line) }
        }
        return line
    }

    private enum Mutation: CaseIterable {
        case drop, duplicate, retype, hostileString, unknownField, nest, hugeNumber, newID, newOp, respellKey, shuffle
    }

    private mutating func mutate(_ members: inout [FuzzMember]) {
        let index = members.isEmpty ? 0 : random.below(members.count)
        switch random.pick(Mutation.allCases) {
        case .drop where !members.isEmpty:
            members.remove(at: index)
        case .duplicate where !members.isEmpty:
            // The same key again, with the same value or another: a repeated known field is refused.
            var copy = members[index]
            if random.percent(50) { copy.value = value(depth: 0) }
            members.insert(copy, at: random.number(in: 0...members.count))
        case .retype where !members.isEmpty:
            members[index].value = value(depth: 0)
        case .hostileString where !members.isEmpty:
            let field = String(decoding: members[index].key, as: UTF8.self)
            members[index].value = .string(NastyFragments.string(random: &random, field: field))
        case .nest where !members.isEmpty:
            // Around the limit of 32 levels (the request object is the first), and far beyond it.
            let levels = random.pick([1, 2, 30, 31, 32, 33, 100, 1000])
            members[index].value = .nested(members[index].value, levels: levels, inObjects: random.percent(50))
        case .hugeNumber where !members.isEmpty:
            members[index].value = .token(random.pick(NastyFragments.numbers))
        case .unknownField:
            let key = random.percent(50) ? random.pick(NastyFragments.keys) : NastyFragments.string(random: &random)
            members.insert(FuzzMember(key: key, value: value(depth: 0)), at: random.number(in: 0...members.count))
        case .newID:
            members.insert(FuzzMember(key: Array("id".utf8), value: value(depth: 0)), at: random.number(in: 0...members.count))
        case .newOp:
            let op: FuzzValue = random.percent(80) ? .string(random.pick(NastyFragments.ops)) : value(depth: 0)
            if let opIndex = members.firstIndex(where: { $0.key == Array("op".utf8) }) {
                members[opIndex].value = op
            } else {
                members.insert(FuzzMember(key: Array("op".utf8), value: op), at: 0)
            }
        case .respellKey where !members.isEmpty:
            members[index].key = random.pick(NastyFragments.keys)
        case .shuffle:
            members.shuffle(using: &random)
        default:
            break  // A mutation of a member, and there is none left.
        }
    }

    /// A value of any JSON type, or one that is not JSON at all; `depth` keeps containers small.
    private mutating func value(depth: Int) -> FuzzValue {
        switch random.below(depth < 2 ? 100 : 60) {
        case 0..<30: return .string(NastyFragments.string(random: &random))
        case 30..<50: return .token(random.pick(NastyFragments.numbers))
        case 50..<60: return .token(Array(random.pick(["true", "false", "null", "nul", "True", "undefined"]).utf8))
        case 60..<75: return .array((0..<random.number(in: 0...4)).map { _ in value(depth: depth + 1) })
        case 75..<90:
            return .object(
                (0..<random.number(in: 0...4)).map { _ in
                    FuzzMember(key: random.pick(NastyFragments.keys), value: value(depth: depth + 1))
                }
            )
        default:
            let levels = random.pick([30, 31, 32, 33, 200])
            return .nested(.token(Array("1".utf8)), levels: levels, inObjects: random.percent(50))
        }
    }

    // MARK: Byte-level mutations

    private mutating func mutateBytes(_ line: inout [UInt8]) {
        let position = random.number(in: 0...line.count)
        switch random.below(9) {
        case 0 where position < line.count:
            line[position] = random.percent(70) ? random.pick(NastyFragments.interestingBytes) : random.byte()
        case 1:
            line.insert(random.percent(70) ? random.pick(NastyFragments.interestingBytes) : random.byte(), at: position)
        case 2 where position < line.count:
            line.remove(at: position)
        case 3:
            line.removeSubrange(position...)  // truncated
        case 4:
            line.insert(contentsOf: random.pick(NastyFragments.tokens), at: position)
        case 5:
            let copied = Array(line[position..<random.number(in: position...line.count)])
            line.insert(contentsOf: copied, at: random.number(in: 0...line.count))
        case 6:
            line.append(UInt8(ascii: "\r"))  // the one "\r" the decoder tolerates, or a second one
        case 7:
            line.insert(contentsOf: random.pick([[0xEF, 0xBB, 0xBF], [0x20], [0x09], [0x0D], [0x00]]), at: 0)
        default:
            line += random.pick(NastyFragments.tokens)  // trailing garbage
        }
    }
}
