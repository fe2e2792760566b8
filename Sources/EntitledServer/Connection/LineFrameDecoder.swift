import NIOCore

/// Splits the inbound byte stream into lines at `\n`, refusing any line longer than the limit.
///
/// NIO's `LineBasedFrameDecoder` has no length limit, and `ByteToMessageHandler`'s `maximumBufferSize` only
/// bounds what stays buffered *after* decoding, so a long line that arrives whole would pass it. This decoder
/// checks every line, complete or still arriving, and remembers how far it already searched, so a long line
/// trickling in is scanned once, not once per read.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    /// The longest line accepted, in bytes, not counting its `\n` (nor a `\r` before it).
    let maximumLineLength: Int
    /// How many bytes at the front of the buffer are already known to hold no `\n`.
    private var searchedBytes = 0

    init(maximumLineLength: Int) {
        self.maximumLineLength = maximumLineLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view[(view.startIndex + searchedBytes)...].firstIndex(of: UInt8(ascii: "\n")) else {
            searchedBytes = view.count
            // One byte of slack: the line may still end in "\r\n". (Written so that no limit can overflow.)
            if view.count - 1 > maximumLineLength { throw LineTooLongError(limit: maximumLineLength) }
            return .needMoreData
        }
        searchedBytes = 0
        let length = newline - view.startIndex
        let contentLength = length > 0 && view[newline - 1] == UInt8(ascii: "\r") ? length - 1 : length
        if contentLength > maximumLineLength { throw LineTooLongError(limit: maximumLineLength) }
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        // The peer closed its side after a last line without "\n": answer it all the same.
        if seenEOF, buffer.readableBytes > 0 {
            let view = buffer.readableBytesView
            let contentLength = view.last == UInt8(ascii: "\r") ? view.count - 1 : view.count
            if contentLength > maximumLineLength { throw LineTooLongError(limit: maximumLineLength) }
            searchedBytes = 0
            context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: buffer.readableBytes)!))
        }
        return .needMoreData
    }
}

/// A line exceeded the server's maximum line length.
struct LineTooLongError: Error {
    let limit: Int
}
