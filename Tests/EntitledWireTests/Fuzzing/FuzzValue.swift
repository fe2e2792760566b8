/// A JSON value as the fuzzer builds it: a tree whose leaves hold raw bytes, so that a leaf can be anything
/// from a valid string to an overlong UTF-8 sequence or a number no `Double` holds. Mutations work on the
/// tree (drop a field, retype it, nest it) and on the bytes it renders to.
indirect enum FuzzValue: Sendable {
    /// A string: the bytes between the quotes, as they go on the wire (escapes are written, not applied).
    case string([UInt8])
    /// Anything else written as it is: a number, `true`, `false`, `null`, or garbage.
    case token([UInt8])
    case array([FuzzValue])
    case object([FuzzMember])

    /// The line's bytes. With a `spacing` above zero, that percentage of the gaps between tokens get a
    /// run of JSON whitespace, which a decoder must skip and an echoed `id` must lose.
    func rendered(random: inout SplitMix64, spacing: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        write(to: &bytes, random: &random, spacing: spacing)
        return bytes
    }

    private func write(to bytes: inout [UInt8], random: inout SplitMix64, spacing: Int) {
        func gap() {
            guard spacing > 0, random.percent(spacing) else { return }
            for _ in 0..<random.number(in: 1...3) { bytes.append(random.pick(FuzzValue.whitespace)) }
        }
        switch self {
        case .string(let text):
            bytes.append(UInt8(ascii: "\""))
            bytes += text
            bytes.append(UInt8(ascii: "\""))
        case .token(let text):
            bytes += text
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                gap()
                element.write(to: &bytes, random: &random, spacing: spacing)
                gap()
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                gap()
                FuzzValue.string(member.key).write(to: &bytes, random: &random, spacing: spacing)
                gap()
                bytes.append(UInt8(ascii: ":"))
                gap()
                member.value.write(to: &bytes, random: &random, spacing: spacing)
                gap()
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// JSON's four whitespace bytes (RFC 8259): `\n` included, which the framing never passes on but the
    /// decoder must treat like the others if it ever did.
    static let whitespace: [UInt8] = [0x20, 0x09, 0x0D, 0x0A]

    /// `value` wrapped in `levels` arrays or single-key objects.
    static func nested(_ value: FuzzValue, levels: Int, inObjects: Bool) -> FuzzValue {
        var nested = value
        for _ in 0..<levels {
            nested = inObjects ? .object([FuzzMember(key: Array("a".utf8), value: nested)]) : .array([nested])
        }
        return nested
    }
}

/// One `"key":value` of an object; the key's bytes are raw, like a string's.
struct FuzzMember: Sendable {
    var key: [UInt8]
    var value: FuzzValue

    init(key: [UInt8], value: FuzzValue) {
        self.key = key
        self.value = value
    }
}

// Literals, so that the request templates read like the JSON they stand for.
extension FuzzValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    init(stringLiteral value: String) { self = .string(Array(value.utf8)) }
    init(integerLiteral value: Int) { self = .token(Array(String(value).utf8)) }
    init(booleanLiteral value: Bool) { self = .token(Array(String(value).utf8)) }
    init(arrayLiteral elements: FuzzValue...) { self = .array(elements) }
    init(nilLiteral: ()) { self = .token(Array("null".utf8)) }
}
