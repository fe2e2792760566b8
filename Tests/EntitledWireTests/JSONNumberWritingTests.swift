import EntitledCore
import NIOCore
import Testing

@testable import EntitledWire

/// Numbers and times as the answers write them in place (no `String` made for each): the same text
/// `String(value)` and `Timestamp.rfc3339` give, at the edges of their ranges.
@Suite struct JSONNumberWritingTests {
    @Test(arguments: [0, 7, 10, 99, 1_000_000, -1, -42, Int.max, Int.min])
    func anIntegerIsWrittenAsItsDecimalText(value: Int) {
        var buffer = ByteBuffer()
        buffer.writeJSONInteger(value)
        #expect(String(buffer: buffer) == String(value))
    }

    @Test(arguments: [UInt64(0), 1, 18_446_744_073_709_551_615])
    func aSequenceNumberIsWrittenAsItsDecimalText(value: UInt64) {
        var buffer = ByteBuffer()
        buffer.writeJSONInteger(value)
        #expect(String(buffer: buffer) == String(value))
    }

    @Test(arguments: [Int64(0), 1_700_000_000_123, -86_400_001, 253_402_300_799_999, Int64.max, Int64.min])
    func aTimeIsWrittenQuotedAsItsRFC3339Text(milliseconds: Int64) {
        let time = Timestamp(millisecondsSinceEpoch: milliseconds)
        var buffer = ByteBuffer()
        buffer.writeJSONTimestamp(time)
        #expect(String(buffer: buffer) == "\"" + time.rfc3339 + "\"")
    }
}
