import NIOCore
import Testing

@testable import EntitledServer

/// Request lines cut from a connection's input, without a socket.
@Suite struct LineFramerTests {
    private func framer(_ text: String, maximum: Int = 16) -> LineFramer {
        LineFramer(bytes: ByteBuffer(string: text), maximumLineLength: maximum)
    }

    private func lines(_ framer: inout LineFramer) -> [String] {
        var lines: [String] = []
        while case .line(let line) = framer.nextLine() { lines.append(String(buffer: line)) }
        return lines
    }

    @Test func completeLinesComeOutInOrderAndAPartialOneWaitsForTheRest() {
        var input = framer("{\"op\":1}\n{\"op\":2}\r\n{\"op\"")
        #expect(lines(&input) == ["{\"op\":1}", "{\"op\":2}\r"])
        guard case .incomplete = input.nextLine() else { Issue.record("a partial line was framed"); return }
        input.bytes.writeString(":3}\n")
        #expect(lines(&input) == ["{\"op\":3}"])
        input.compact(discardAfter: 0)
        #expect(input.bytes.readerIndex == 0 && input.bytes.readableBytes == 0)
    }

    @Test func aLineOverTheLimitIsReportedCompleteOrNotAndTheCarriageReturnDoesNotCount() {
        var exact = framer(String(repeating: "x", count: 16) + "\r\n")
        #expect(lines(&exact) == [String(repeating: "x", count: 16) + "\r"])
        var long = framer(String(repeating: "x", count: 17) + "\n")
        guard case .tooLong = long.nextLine() else { Issue.record("a long line was framed"); return }
        // Still arriving: known too long once it holds more than the limit and a possible "\r".
        var arriving = framer(String(repeating: "x", count: 17))
        guard case .incomplete = arriving.nextLine() else { Issue.record("17 bytes may still be 16 and \\r"); return }
        arriving.bytes.writeString("x")
        guard case .tooLong = arriving.nextLine() else { Issue.record("an endless line was not refused"); return }
    }

    @Test func theLastLineWithoutANewlineIsTakenAtTheEndOfInput() {
        var input = framer("{\"op\":1}\n{\"op\":2}")
        #expect(lines(&input) == ["{\"op\":1}"])
        guard case .line(let last)? = input.unterminatedLastLine() else { Issue.record("no last line"); return }
        #expect(String(buffer: last) == "{\"op\":2}")
        #expect(input.unterminatedLastLine() == nil)
        var long = framer(String(repeating: "y", count: 20))
        guard case .tooLong? = long.unterminatedLastLine() else { Issue.record("a long last line was taken"); return }
    }
}
