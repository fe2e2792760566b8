import Testing

@testable import EntitledStorage

/// Strings read back from log records and snapshots: every valid UTF-8 string as written, and bytes that
/// are not UTF-8 refused with the offset of the string, never repaired into another string.
@Suite struct BinaryReaderStringTests {
    private func read(_ bytes: [UInt8]) -> Result<String, BinaryReader.Malformed> {
        bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            do throws(BinaryReader.Malformed) {
                return .success(try reader.readString())
            } catch {
                return .failure(error)
            }
        }
    }

    private func lengthPrefixed(_ payload: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { Array($0) } + payload
    }

    @Test(arguments: ["", "u1", "000000012345", "a user id of more than eight bytes", "Zoë", "ユーザー", "emoji 🎟️ ticket", "x\u{0}y"])
    func aWrittenStringIsReadBackAsItWas(string: String) throws {
        var writer = BinaryWriter(capacity: 64)
        writer.write(string)
        #expect(try read(writer.bytes).get() == string)
    }

    @Test(arguments: [[0xFF], [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0xC3], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0x61, 0xF0, 0x9F, 0x8E]] as [[UInt8]])
    func bytesThatAreNotUTF8AreRefusedAtTheString(payload: [UInt8]) {
        guard case .failure(let error) = read(lengthPrefixed(payload)) else {
            Issue.record("\(payload) was read as a string")
            return
        }
        #expect(error.offset == 4)
        #expect(error.problem == "a string is not valid UTF-8")
    }
}
