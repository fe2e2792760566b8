import NIOCore

/// Splits the byte stream into lines (without `\n`, and without one `\r` before it) as Strings.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = String

    let maximumLength: Int
    /// How many readable bytes were already searched for a newline.
    private var scanned = 0

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view.dropFirst(scanned).firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            guard view.count <= maximumLength + 1 else { throw ResponseLineTooLong() }
            return .needMoreData
        }
        var line = buffer.readString(length: view.distance(from: view.startIndex, to: newline)) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.utf8.last == UInt8(ascii: "\r") { line.removeLast() }
        scanned = 0
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // A last line without a newline is no complete answer: the connection's end fails what waits.
        buffer.clear()
        return .needMoreData
    }
}

// MARK: - Matching answers to requests
