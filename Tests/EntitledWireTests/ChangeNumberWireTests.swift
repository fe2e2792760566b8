import EntitledCore
import NIOCore
import Testing

@testable import EntitledWire

@Suite("seq and minSeq on the wire")
struct ChangeNumberWireTests {
    @Test func minSeqIsDecodedBesideTheRequestAsAChangeNumber() throws {
        #expect(decode(#"{"op":"check","user":"u1","minSeq":12345678901}"#).minimumSequence == 12_345_678_901)
        #expect(decode(#"{"op":"memberships","user":"u1","minSeq":7}"#).minimumSequence == 7)
        #expect(decode(#"{"op":"customer","device":"d1","minSeq":1}"#).minimumSequence == 1)
        #expect(decode(#"{"op":"check","user":"u1","minSeq":null}"#).minimumSequence == 0)
        #expect(decode(#"{"op":"check","user":"u1"}"#).minimumSequence == 0)
        // The largest accepted: 18 digits, below 2^63.
        #expect(decode(#"{"op":"check","user":"u1","minSeq":999999999999999999}"#).minimumSequence == 999_999_999_999_999_999)
    }

    @Test func minSeqOfAnotherTypeOrOnAnotherOperationIsRefused() throws {
        for value in [#""5""#, "-1", "1.0", "1e3", "true", "[1]", "1234567890123456789"] {
            let error = try failure(#"{"op":"check","user":"u1","minSeq":\#(value)}"#)
            #expect(error.code == .badRequest, "\(value)")
            #expect(error.message.contains(#""minSeq""#), "\(value): \(error.message)")
        }
        for (operation, fields) in [("grant", #""user":"u1","product":"p""#), ("history", #""user":"u1""#), ("watch", #""all":true"#), ("catalog", "")] {
            let error = try failure(#"{"op":"\#(operation)",\#(fields)\#(fields.isEmpty ? "" : ",")"minSeq":1}"#)
            #expect(error.code == .badRequest)
            #expect(error.message.contains(#""minSeq" is not used by \#(operation)"#), "\(error.message)")
        }
    }

    @Test func aWriteAnswerCarriesSeqRightAfterID() {
        var buffer = ByteBuffer()
        ResponseEncoder.write(.claimed(2), id: ByteBuffer(string: "1"), sequence: 7, into: &buffer)
        #expect(String(buffer: buffer) == #"{"ok":true,"id":1,"seq":7,"claimed":2}"# + "\n")
        buffer.clear()
        ResponseEncoder.write(.erased(memberships: 0, historyEntries: 0), id: nil, sequence: 0, into: &buffer)
        #expect(String(buffer: buffer).hasPrefix(#"{"ok":true,"seq":0,"#))
        buffer.clear()
        // No number, no field: what reads answer.
        ResponseEncoder.write(.claimed(2), id: nil, into: &buffer)
        #expect(String(buffer: buffer) == #"{"ok":true,"claimed":2}"# + "\n")
    }
}
