import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A connection's input cut into request lines: the bytes read and not yet framed, and the next line in
/// them. A plain value with no socket, so framing is tested on its own (`LineFramerTests`), as NIO keeps
/// its `ByteToMessageDecoder`s apart from channels.
///
/// Lines end at `\n`; a `\r` before it is not part of the line's content (it is left in the line, which
/// the JSON scanner takes as whitespace). A line longer than `maximumLineLength` is reported as soon as it
/// is known, complete or not, so that a client cannot make the buffer grow without bound.
///
/// Lines are searched for once: `lookAhead` finds the complete lines a pipelining client sent (for the
/// prefetch of their users) and keeps where each ends, and `nextLine` then takes them from there instead
/// of searching again.
struct LineFramer {
    /// Bytes read and not yet taken as lines: the reads append here.
    var bytes: ByteBuffer
    /// How many bytes at the front of `bytes` are known to hold no `\n`: a line arriving in pieces is
    /// searched once, not again from its start at every read.
    private var searchedBytes = 0
    /// Where the lines `lookAhead` found end (the index in `bytes` of each one's `\n`), in order, and how
    /// many of them `nextLine` has taken. Indices in `bytes` stay valid while reads append to it; `compact`,
    /// which moves the bytes, and `clear` forget them.
    private var foundLineEnds: [Int] = []
    private var takenFoundLines = 0
    let maximumLineLength: Int

    init(bytes: ByteBuffer, maximumLineLength: Int) {
        self.bytes = bytes
        self.maximumLineLength = maximumLineLength
    }

    enum Frame {
        /// A complete line, without its `\n` (a slice of `bytes`: no copy).
        case line(ByteBuffer)
        /// No complete line yet.
        case incomplete
        /// The line at the front is longer than `maximumLineLength`.
        case tooLong
    }

    /// Finds up to `limit` complete lines at the front without taking them, and keeps where they end for
    /// `nextLine`: how many it found.
    mutating func lookAhead(upTo limit: Int) -> Int {
        forgetFoundLines()
        var found: [Int] = []
        swap(&found, &foundLineEnds)  // appended to in place: `bytes` is borrowed below
        defer { swap(&found, &foundLineEnds) }
        let readerIndex = bytes.readerIndex
        bytes.withUnsafeReadableBytes { readable in
            guard let base = readable.baseAddress else { return }
            var start = 0
            while found.count < limit, start < readable.count,
                let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), readable.count - start)
            {
                let end = base.distance(to: UnsafeRawPointer(newline))
                found.append(readerIndex + end)
                start = end + 1
            }
        }
        return found.count
    }

    /// Calls `body` with the bytes of each line `lookAhead` found and `nextLine` has not taken yet (a `\r`
    /// before its `\n` included).
    func withFoundLines(_ body: (UnsafeRawBufferPointer) -> Void) {
        guard takenFoundLines < foundLineEnds.count else { return }
        bytes.withUnsafeReadableBytes { readable in
            var start = 0
            for end in foundLineEnds[takenFoundLines...] {
                let relativeEnd = end - bytes.readerIndex
                body(UnsafeRawBufferPointer(rebasing: readable[start..<relativeEnd]))
                start = relativeEnd + 1
            }
        }
    }

    /// Takes the next complete line off the front.
    @inline(__always)
    mutating func nextLine() -> Frame {
        if takenFoundLines < foundLineEnds.count {
            let frame = take(lineOfLength: foundLineEnds[takenFoundLines] - bytes.readerIndex)
            if case .line = frame { takenFoundLines += 1 }
            return frame
        }
        let searched = searchedBytes
        let found: Int? = bytes.withUnsafeReadableBytes { readable in
            guard searched < readable.count,
                let start = readable.baseAddress?.advanced(by: searched),
                let newline = memchr(start, Int32(UInt8(ascii: "\n")), readable.count - searched)
            else { return nil }
            return readable.baseAddress!.distance(to: UnsafeRawPointer(newline))
        }
        guard let length = found else {
            searchedBytes = bytes.readableBytes
            // One byte of slack: the line may still end in "\r\n".
            return bytes.readableBytes - 1 > maximumLineLength ? .tooLong : .incomplete
        }
        return take(lineOfLength: length)
    }

    /// Takes the line of `length` bytes at the front and its `\n`, unless its content is over the limit.
    @inline(__always)
    private mutating func take(lineOfLength length: Int) -> Frame {
        searchedBytes = 0
        let contentLength =
            length > 0 && bytes.getInteger(at: bytes.readerIndex + length - 1, as: UInt8.self) == UInt8(ascii: "\r")
            ? length - 1 : length
        if contentLength > maximumLineLength { return .tooLong }
        let line = bytes.getSlice(at: bytes.readerIndex, length: length)!
        bytes.moveReaderIndex(forwardBy: length + 1)
        return .line(line)
    }

    /// The input's last line when it ended without `\n` (the client closed its side): `nil` when nothing
    /// is left.
    mutating func unterminatedLastLine() -> Frame? {
        guard bytes.readableBytes > 0 else { return nil }
        let view = bytes.readableBytesView
        let contentLength = view.last == UInt8(ascii: "\r") ? view.count - 1 : view.count
        if contentLength > maximumLineLength { return .tooLong }
        searchedBytes = 0
        forgetFoundLines()
        return .line(bytes.readSlice(length: bytes.readableBytes)!)
    }

    /// Gives back the room of the lines taken, once they are answered: the buffer is emptied when all is
    /// taken, and moved down once `discardAfter` bytes at its front are taken.
    mutating func compact(discardAfter: Int) {
        forgetFoundLines()
        if bytes.readableBytes == 0 {
            bytes.clear()
        } else if bytes.readerIndex >= discardAfter {
            bytes.discardReadBytes()
        }
    }

    /// Forgets everything read: the connection reads no more requests.
    mutating func clear() {
        bytes.clear()
        searchedBytes = 0
        forgetFoundLines()
    }

    @inline(__always)
    private mutating func forgetFoundLines() {
        if !foundLineEnds.isEmpty { foundLineEnds.removeAll(keepingCapacity: true) }
        takenFoundLines = 0
    }
}
