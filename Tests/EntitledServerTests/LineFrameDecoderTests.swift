import NIOCore
import NIOEmbedded
import Testing

@testable import EntitledServer

@Suite("Splitting the byte stream into lines")
struct LineFrameDecoderTests {
    /// Feeds `chunks` to a decoder in an embedded channel and returns the lines it produced.
    static func lines(from chunks: [[UInt8]], limit: Int = 1024) throws -> [String] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maximumLineLength: limit)))
        var lines: [String] = []
        for chunk in chunks {
            try channel.writeInbound(ByteBuffer(bytes: chunk))
            while let line: ByteBuffer = try channel.readInbound() {
                lines.append(String(buffer: line))
            }
        }
        _ = try channel.finish()
        return lines
    }

    @Test func everyLineArrivesWhateverHowTheStreamIsCut() throws {
        var random = SeededGenerator(state: 42)
        for _ in 0..<200 {
            let expected = (0..<Int.random(in: 1...60, using: &random)).map { index in
                String(repeating: "x", count: Int.random(in: 0...40, using: &random)) + "\(index)"
            }
            let stream = Array(expected.map { $0 + "\n" }.joined().utf8)
            var chunks: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                let length = Int.random(in: 1...max(1, min(97, stream.count - offset)), using: &random)
                chunks.append(Array(stream[offset..<(offset + length)]))
                offset += length
            }
            #expect(try Self.lines(from: chunks) == expected)
        }
    }
}
