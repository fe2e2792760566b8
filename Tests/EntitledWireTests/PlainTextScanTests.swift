import Foundation
import NIOCore
import Testing

@testable import EntitledWire

/// The scanner finds the end of a string's plain text eight bytes at a time; these prove the word test
/// agrees with the byte test for every byte in every position, and that strings of every length around
/// the word size decode the same whatever byte ends their plain part.
@Suite struct PlainTextScanTests {
    private func isSpecial(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80
    }

    @Test func theWordTestFlagsExactlyTheWordsHoldingASpecialByte() {
        let plain = Array("abcdefgh".utf8)
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = plain
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                #expect(
                    JSONScanner.hasSpecialByte(UInt64(littleEndian: word)) == isSpecial(UInt8(value)),
                    "byte \(value) at \(position)"
                )
            }
        }
        // Specials next to each other and around the boundaries borrows cross.
        for bytes: [UInt8] in [[0x00, 0x01, 0x22, 0x5C, 0x7F, 0x80, 0xFF, 0x20], [0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x20, 0x41, 0x7A]] {
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            #expect(JSONScanner.hasSpecialByte(UInt64(littleEndian: word)) == bytes.contains(where: isSpecial))
        }
    }

    @Test func stringsOfEveryLengthDecodeWhateverEndsTheirPlainPart() throws {
        for length in 0...40 {
            let plain = String(repeating: "u", count: length)
            #expect(try request(#"{"op":"check","user":"\#(plain)x"}"#).accessQuery?.subject.user == plain + "x")
            #expect(try request(#"{"op":"check","user":"\#(plain)\n"}"#).accessQuery?.subject.user == plain + "\n")
            #expect(try request(#"{"op":"check","user":"\#(plain)é"}"#).accessQuery?.subject.user == plain + "é")
            #expect(try failure(#"{"op":"check","user":"\#(plain)"# + "\u{01}\"}").code == .badJSON)
            #expect(try failure(#"{"op":"check","user":"\#(plain)"#).code == .badJSON)
        }
    }

    /// `UnsafeLineWriter.appendJSONString` skips plain words eight bytes at a time: whatever byte sits at
    /// whatever position of strings of every length, the output is what escaping byte by byte gives.
    @Test func stringsOfEveryLengthAreEscapedWhateverByteTheyHoldWherever() throws {
        for length in 0...40 {
            for position in stride(from: 0, to: max(length, 1), by: 1) {
                for special: UInt8 in [0x00, 0x0A, 0x1F, 0x22, 0x5C, 0x7F, 0xC3] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "u"), count: length)
                    if position < length { bytes[position] = special }
                    if special == 0xC3, position + 1 < length { bytes[position + 1] = 0xA9 }  // é, whole
                    var buffer = ByteBuffer()
                    buffer.writeJSONString(String(decoding: bytes, as: UTF8.self))
                    #expect(buffer.readString(length: buffer.readableBytes) == Self.escapedByteByByte(bytes), "length \(length), byte \(special) at \(position)")
                }
            }
        }
    }

    /// The JSON string literal of `bytes`, escaped one byte at a time (the reference).
    static func escapedByteByByte(_ bytes: [UInt8]) -> String {
        var out = "\""
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case let control where control.value < 0x20: out += String(format: "\\u%04x", control.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
