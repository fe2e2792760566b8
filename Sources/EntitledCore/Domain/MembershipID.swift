/// The identifier of a membership: `mem_` followed by 13 lowercase Crockford base32 characters
/// (64 random bits), for example `mem_0k3n5q8r2t4v6`.
///
/// Random rather than sequential so that ids reveal nothing about sales volume and stay unique across
/// restarts without coordinating a counter; the store rejects the (astronomically rare) collision.
public struct MembershipID: Hashable, Sendable, CustomStringConvertible {
    /// The id as written on the wire.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let prefix = "mem_"

    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new random id.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> MembershipID {
        var bits = generator.next()
        var characters = [UInt8](repeating: 0, count: 13)
        for index in stride(from: 12, through: 0, by: -1) {
            characters[index] = alphabet[Int(bits & 31)]
            bits >>= 5
        }
        return MembershipID(rawValue: prefix + String(decoding: characters, as: UTF8.self))
    }
}
