/// The identifier of a membership: `mem_` followed by 13 lowercase Crockford base32 characters
/// (64 random bits), for example `mem_0k3n5q8r2t4v6`.
///
/// Random rather than sequential so that ids reveal nothing about sales volume and stay unique across
/// restarts without coordinating a counter; the store rejects the (astronomically rare) collision.
///
/// Kept as its 64 bits, not as text: as a 17-byte string every id was a heap allocation of its own
/// (64 bytes with the allocator's rounding, a fifth of the memory a user cost at 1M users) and hashing
/// it cost a string hash on every lookup. Text that is not a canonical id (a client may send anything
/// to `revoke`) is kept as it came, so it is reported back verbatim and never equals a real id.
public struct MembershipID: Hashable, Sendable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        case canonical(UInt64)
        case other(String)
    }

    private let storage: Storage

    public init(rawValue: String) {
        storage = Self.bits(of: rawValue).map(Storage.canonical) ?? .other(rawValue)
    }

    /// The id whose 64 bits are `bits`.
    public init(bits: UInt64) {
        storage = .canonical(bits)
    }

    /// The id as written on the wire.
    public var rawValue: String {
        switch storage {
        case .canonical(let bits): return Self.text(of: bits)
        case .other(let text): return text
        }
    }

    /// The id's 64 bits, or `nil` for text that is not a canonical id (no membership has such an id).
    public var bits: UInt64? {
        if case .canonical(let bits) = storage { return bits }
        return nil
    }

    public var description: String { rawValue }

    public static let prefix = "mem_"

    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { values[Int(character)] = UInt8(value) }
        return values
    }()

    /// A new random id.
    public static func random<Generator: RandomNumberGenerator>(using generator: inout Generator) -> MembershipID {
        MembershipID(bits: generator.next())
    }

    /// The length of a canonical id's text.
    public static let textLength = 17

    private static func text(of bits: UInt64) -> String {
        String(unsafeUninitializedCapacity: textLength) { spell(bits, into: UnsafeMutableRawBufferPointer($0)) }
    }

    /// Calls `body` with the id's UTF-8 text, without building a String for a canonical id: encoders
    /// copy it straight into their output (a String of 17 bytes is a heap allocation).
    ///
    /// Not generic on purpose: called from other modules, a generic version was not specialized and
    /// looked up its metadata at run time on every call, about 2,500 instructions of a grant.
    public func withUTF8(_ body: (UnsafeRawBufferPointer) -> Void) {
        switch storage {
        case .canonical(let bits):
            withUnsafeTemporaryAllocation(byteCount: Self.textLength, alignment: 1) { buffer in
                let count = Self.spell(bits, into: buffer)
                body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        case .other(var text):
            text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
    }

    /// The length of the id's UTF-8 text.
    public var utf8Count: Int {
        switch storage {
        case .canonical: return Self.textLength
        case .other(let text): return text.utf8.count
        }
    }

    /// Writes the text of `bits` (`textLength` bytes) at the start of `buffer`; returns its length.
    private static func spell(_ bits: UInt64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let digits: StaticString = "0123456789abcdefghjkmnpqrstvwxyz"
        let prefix: StaticString = "mem_"
        var bits = bits
        for index in 0..<4 { buffer[index] = prefix.utf8Start[index] }
        for index in stride(from: textLength - 1, through: 4, by: -1) {
            buffer[index] = digits.utf8Start[Int(bits & 31)]
            bits >>= 5
        }
        return textLength
    }

    /// The bits `text` spells, if it is exactly what `text(of:)` writes for some 64-bit value.
    private static func bits(of text: String) -> UInt64? {
        var text = text
        return text.withUTF8 { bytes -> UInt64? in
            guard bytes.count == 17, bytes.starts(with: prefix.utf8) else { return nil }
            var bits: UInt64 = 0
            for index in 4..<17 {
                let value = values[Int(bytes[index])]
                guard value != 0xFF else { return nil }
                // 13 characters carry 65 bits: the first may only use the low four.
                if index == 4, value > 15 { return nil }
                bits = bits << 5 | UInt64(value)
            }
            return bits
        }
    }
}
