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

    private func foundLines(_ framer: LineFramer) -> [String] {
        var lines: [String] = []
        framer.withFoundLines { lines.append(String(decoding: $0, as: UTF8.self)) }
        return lines
    }

    @Test func linesFoundAheadAreTakenInOrderAndTheRestAreSearchedAsBefore() {
        var input = framer("{\"op\":1}\n{\"op\":2}\r\n{\"op\":3}\n{\"op\"")
        #expect(input.lookAhead(upTo: 2) == 2)
        #expect(foundLines(input) == ["{\"op\":1}", "{\"op\":2}\r"])
        guard case .line(let first) = input.nextLine() else { Issue.record("no first line"); return }
        #expect(String(buffer: first) == "{\"op\":1}")
        #expect(foundLines(input) == ["{\"op\":2}\r"])
        // Past the lines found ahead, the third is searched for; the partial fourth still waits.
        #expect(lines(&input) == ["{\"op\":2}\r", "{\"op\":3}"])
        guard case .incomplete = input.nextLine() else { Issue.record("a partial line was framed"); return }
        input.bytes.writeString(":4}\n")
        #expect(input.lookAhead(upTo: 16) == 1)
        #expect(lines(&input) == ["{\"op\":4}"])
    }

    @Test func linesFoundAheadStayRightWhileReadsAppendAndAreForgottenWhenTheBufferMoves() {
        var input = framer("{\"op\":1}\n{\"op\":2}\n", maximum: 8192)
        #expect(input.lookAhead(upTo: 16) == 2)
        // A read that makes the buffer grow (and perhaps move) keeps the indices of what it held.
        input.bytes.writeString(String(repeating: " ", count: 4096) + "{\"op\":3}\n")
        #expect(lines(&input) == ["{\"op\":1}", "{\"op\":2}", String(repeating: " ", count: 4096) + "{\"op\":3}"])
        var moved = framer("{\"op\":1}\n{\"op\":2}\n{\"op\":3}\n")
        #expect(moved.lookAhead(upTo: 16) == 3)
        guard case .line = moved.nextLine() else { Issue.record("no first line"); return }
        moved.compact(discardAfter: 0)  // moves the bytes down: the ends found are no longer where they were
        #expect(foundLines(moved).isEmpty)
        #expect(lines(&moved) == ["{\"op\":2}", "{\"op\":3}"])
    }

    @Test func aLineFoundAheadOverTheLimitIsReportedAndNotSkipped() {
        var input = framer("{\"op\":1}\n" + String(repeating: "x", count: 17) + "\n{\"op\":3}\n")
        #expect(input.lookAhead(upTo: 16) == 3)
        guard case .line = input.nextLine() else { Issue.record("no first line"); return }
        guard case .tooLong = input.nextLine() else { Issue.record("a long line was framed"); return }
        guard case .tooLong = input.nextLine() else { Issue.record("the line after a long one was framed"); return }
    }
}
