import Foundation

/// Foundation's JSONSerialization as a second opinion on the decoder: an independent parser, so that what
/// the decoder accepts can be checked against it.
///
/// One difference is Foundation's, not the protocol's: JSONSerialization refuses a number a `Double`
/// cannot hold (`1e400`, 400 digits: "not representable in Swift"), which RFC 8259 allows and the decoder
/// accepts. When the line fails only because of such numbers, those numbers (and only those) are
/// replaced with `0` and the line parsed again.
///
/// The other: Foundation drops a raw U+FEFF (UTF-8 EF BB BF) at the start of a string, a key, or the
/// text after an escape in a string, taking it for a byte order mark; an escaped `\uFEFF` it keeps.
/// `containsByteOrderMark` and `scalarsWithoutByteOrderMarks` let a caller allow for that.
enum FoundationJSON {
    /// The value of `bytes` (any JSON value at the top level), or `nil` when Foundation refuses it.
    static func parse(_ bytes: [UInt8]) -> Any? {
        if let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) {
            return value
        }
        let (tamed, replaced) = replacingUnrepresentableNumbers(in: bytes)
        guard replaced > 0 else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(tamed), options: [.fragmentsAllowed])
    }

    /// `bytes` with every number outside strings whose value overflows a `Double` replaced by `0`, and
    /// how many were. Meant for text that is valid JSON: strings are found by their quotes and escapes.
    static func replacingUnrepresentableNumbers(in bytes: [UInt8]) -> (bytes: [UInt8], replaced: Int) {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var replaced = 0
        var index = 0
        var insideString = false
        while index < bytes.count {
            let byte = bytes[index]
            if insideString {
                output.append(byte)
                if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                    output.append(bytes[index + 1])
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    insideString = false
                }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") { insideString = true }
            guard byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                output.append(byte)
                index += 1
                continue
            }
            // A number runs over digits, signs, points and exponents (`true` and `false` hold an "e" but
            // never start with a digit or a minus).
            let start = index
            while index < bytes.count, Self.numberBytes.contains(bytes[index]) { index += 1 }
            let number = bytes[start..<index]
            if let value = Double(String(decoding: number, as: UTF8.self)), !value.isFinite {
                output.append(UInt8(ascii: "0"))
                replaced += 1
            } else {
                output += number
            }
        }
        return (output, replaced)
    }

    /// The scalars of `string` other than U+FEFF, for comparing a string with Foundation's reading of it.
    static func scalarsWithoutByteOrderMarks(_ string: String) -> [Unicode.Scalar] {
        string.unicodeScalars.filter { $0 != "\u{FEFF}" }
    }

    /// Whether `bytes` hold U+FEFF in UTF-8 (EF BB BF), which Foundation may drop from a string.
    static func containsByteOrderMark(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3 else { return false }
        return (0...(bytes.count - 3)).contains { bytes[$0] == 0xEF && bytes[$0 + 1] == 0xBB && bytes[$0 + 2] == 0xBF }
    }

    private static let numberBytes = Set(Array("0123456789+-.eE".utf8))
}
