import EntitledCore
import EntitledWire
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
        while case .line(let line, _) = framer.nextLine() { lines.append(String(buffer: line)) }
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
        guard case .line(let last, _)? = input.unterminatedLastLine() else { Issue.record("no last line"); return }
        #expect(String(buffer: last) == "{\"op\":2}")
        #expect(input.unterminatedLastLine() == nil)
        var long = framer(String(repeating: "y", count: 20))
        guard case .tooLong? = long.unterminatedLastLine() else { Issue.record("a long last line was taken"); return }
    }

    // MARK: Looking ahead

    private static let checkLine = #"{"op":"check","user":"alice","entitlement":"pro","id":7}"#
    private static let grantLine = #"{"op":"grant","user":"bob","product":"p"}"#

    /// Takes every complete line with what was found in it.
    private func frames(_ framer: inout LineFramer) -> [(String, CompactCheckLook)] {
        var frames: [(String, CompactCheckLook)] = []
        while case .line(let line, let look) = framer.nextLine() { frames.append((String(buffer: line), look)) }
        return frames
    }

    @Test func linesLookedAtAheadComeOutAsTheyWouldWithTheirChecksDecodedOnce() throws {
        let text = Self.checkLine + "\n" + Self.grantLine + "\r\n" + Self.checkLine + "\n{\"op\""
        var plain = framer(text, maximum: 100)
        var looking = framer(text, maximum: 100)
        #expect(looking.lookAhead(upTo: 10) == 2)
        var users: [String] = []
        looking.forEachUserJustLookedAt { users.append($0) }
        #expect(users == ["alice", "alice"])
        let seen = frames(&looking)
        #expect(seen.map(\.0) == lines(&plain))
        #expect(seen.count == 3)
        guard case .check(let check) = seen[0].1, case .notCompact = seen[1].1, case .check = seen[2].1 else {
            Issue.record("looks: \(seen.map(\.1))")
            return
        }
        #expect(check.query.subject == .user("alice"))
        #expect(check.query.filter == .entitlement("pro"))
        #expect(check.id(in: ByteBuffer(string: seen[0].0)) == ByteBuffer(string: "7"))
        // The partial line was not looked at, and is framed as usual once complete.
        looking.bytes.writeString(":\"ping\"}\n")
        guard case .line(let last, .notLooked) = looking.nextLine() else {
            Issue.record("the partial line was looked at")
            return
        }
        #expect(String(buffer: last) == #"{"op":"ping"}"#)
    }

    @Test func aLookAheadGoesOnWhereTheLastStoppedAndOnlyAsFarAsAsked() {
        var input = framer(Self.checkLine + "\n" + Self.checkLine + "\n" + Self.grantLine + "\n", maximum: 100)
        #expect(input.lookAhead(upTo: 1) == 1)
        // Already one line ahead: asking for one again looks at nothing.
        #expect(input.lookAhead(upTo: 1) == 0)
        var users: [String] = []
        input.forEachUserJustLookedAt { users.append($0) }
        #expect(users.isEmpty)
        #expect(input.lookAhead(upTo: 3) == 1)
        // More bytes arrive and the buffer moves down between turns: what was looked at stays true.
        guard case .line(_, .check) = input.nextLine() else { Issue.record("the first check was not handed on"); return }
        input.compact(discardAfter: 0)
        input.bytes.writeString(Self.checkLine + "\n")
        #expect(input.lookAhead(upTo: 10) == 1)
        let seen = frames(&input)
        #expect(seen.map(\.0) == [Self.checkLine, Self.grantLine, Self.checkLine])
        guard case .check = seen[0].1, case .notCompact = seen[1].1, case .check = seen[2].1 else {
            Issue.record("looks: \(seen.map(\.1))")
            return
        }
    }

    @Test func aLookAheadStopsBeforeALongLineWhichIsStillRefused() {
        var input = framer(Self.checkLine + "\n" + String(repeating: "x", count: 101) + "\n" + Self.checkLine + "\n", maximum: 100)
        #expect(input.lookAhead(upTo: 10) == 1)
        guard case .line(_, .check) = input.nextLine() else { Issue.record("the check was not handed on"); return }
        guard case .tooLong = input.nextLine() else { Issue.record("the long line was framed"); return }
    }

    @Test func forgettingTheInputForgetsWhatWasLookedAt() {
        var input = framer(Self.checkLine + "\n" + Self.checkLine + "\n", maximum: 100)
        #expect(input.lookAhead(upTo: 10) == 2)
        input.clear()
        input.bytes.writeString(#"{"op":"ping"}"# + "\n")
        guard case .line(let line, .notLooked) = input.nextLine() else { Issue.record("a forgotten look was handed on"); return }
        #expect(String(buffer: line) == #"{"op":"ping"}"#)
    }
}
