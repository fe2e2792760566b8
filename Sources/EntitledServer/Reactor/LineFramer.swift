import EntitledWire
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
/// Each line is looked into once on its way to an answer: `lookAhead` (for a pipelining client) finds the
/// next lines' ends and decodes those in the compact check shape, and `nextLine` hands both on instead of
/// searching and decoding again; the general `RequestDecoder` only reads the lines the compact one left.
struct LineFramer {
    /// Bytes read and not yet taken as lines: the reads append here.
    var bytes: ByteBuffer
    /// How many bytes at the front of `bytes` are known to hold no `\n`: a line arriving in pieces is
    /// searched once, not again from its start at every read.
    private var searchedBytes = 0
    let maximumLineLength: Int
    /// The lines at the front of `bytes` already looked at, in order, from `lookedHead` on: the array is
    /// kept (with its capacity) while a pipelined batch is answered, and emptied once it has been.
    private var looked: [LookedLine] = []
    private var lookedHead = 0
    /// How many bytes from the reader index the lines still in `looked` span, their `\n`s included.
    private var lookedBytes = 0
    /// Where in `looked` the lines the last `lookAhead` looked at start.
    private var newlyLooked = 0

    /// A complete line looked at ahead of its turn.
    private struct LookedLine {
        /// The line's length before its `\n`.
        var length: Int
        var check: CompactCheckLook
    }

    init(bytes: ByteBuffer, maximumLineLength: Int) {
        self.bytes = bytes
        self.maximumLineLength = maximumLineLength
    }

    enum Frame {
        /// A complete line, without its `\n` (a slice of `bytes`: no copy), and what a look ahead found in it.
        case line(ByteBuffer, CompactCheckLook)
        /// No complete line yet.
        case incomplete
        /// The line at the front is longer than `maximumLineLength`.
        case tooLong
    }

    /// Takes the next complete line off the front.
    @inline(__always)
    mutating func nextLine() -> Frame {
        if lookedHead < looked.count {
            let next = looked[lookedHead]
            lookedHead += 1
            lookedBytes -= next.length + 1
            if lookedHead == looked.count { forgetLooked() }
            // What was searched before this line was complete lies behind it now.
            searchedBytes = 0
            let line = bytes.getSlice(at: bytes.readerIndex, length: next.length)!
            bytes.moveReaderIndex(forwardBy: next.length + 1)
            return .line(line, next.check)
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
        searchedBytes = 0
        let contentLength =
            length > 0 && bytes.getInteger(at: bytes.readerIndex + length - 1, as: UInt8.self) == UInt8(ascii: "\r")
            ? length - 1 : length
        if contentLength > maximumLineLength { return .tooLong }
        let line = bytes.getSlice(at: bytes.readerIndex, length: length)!
        bytes.moveReaderIndex(forwardBy: length + 1)
        return .line(line, .notLooked)
    }

    /// Looks at the complete lines at the front, up to `limit` of them counting those already looked at:
    /// finds where each ends and decodes it when it is a check in the compact shape, for `nextLine` to hand
    /// on. Stops before a line over `maximumLineLength` (`nextLine` reports it) and at the first incomplete
    /// one. Returns how many of the lines looked at now are checks naming a user
    /// (`forEachUserJustLookedAt` gives them).
    mutating func lookAhead(upTo limit: Int) -> Int {
        newlyLooked = looked.count
        var lookedCount = looked.count - lookedHead
        guard lookedCount < limit else { return 0 }
        var userChecks = 0
        // Where the first line not yet looked at starts, counted from the reader index.
        var start = lookedBytes
        let maximumLineLength = self.maximumLineLength
        var found = looked
        looked = []  // `found` is the only reference while lines are appended: no copy.
        bytes.withUnsafeReadableBytes { readable in
            guard let base = readable.baseAddress else { return }
            while lookedCount < limit, start < readable.count,
                let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), readable.count - start)
            {
                let length = base.distance(to: UnsafeRawPointer(newline)) - start
                let line = UnsafeRawBufferPointer(rebasing: readable[start..<(start + length)])
                let contentLength = line.last == UInt8(ascii: "\r") ? length - 1 : length
                if contentLength > maximumLineLength { break }
                if let check = CompactCheckDecoder.decode(line) {
                    if check.query.subject.user != nil { userChecks += 1 }
                    found.append(LookedLine(length: length, check: .check(check)))
                } else {
                    found.append(LookedLine(length: length, check: .notCompact))
                }
                lookedCount += 1
                start += length + 1
            }
        }
        looked = found
        lookedBytes = start
        return userChecks
    }

    /// Calls `body` with the user of each check the last `lookAhead` found.
    func forEachUserJustLookedAt(_ body: (String) -> Void) {
        for line in looked[newlyLooked...] {
            if case .check(let check) = line.check, let user = check.query.subject.user { body(user) }
        }
    }

    private mutating func forgetLooked() {
        looked.removeAll(keepingCapacity: true)
        lookedHead = 0
        lookedBytes = 0
        newlyLooked = 0
    }

    /// The input's last line when it ended without `\n` (the client closed its side): `nil` when nothing
    /// is left.
    mutating func unterminatedLastLine() -> Frame? {
        guard bytes.readableBytes > 0 else { return nil }
        let view = bytes.readableBytesView
        let contentLength = view.last == UInt8(ascii: "\r") ? view.count - 1 : view.count
        if contentLength > maximumLineLength { return .tooLong }
        searchedBytes = 0
        forgetLooked()
        return .line(bytes.readSlice(length: bytes.readableBytes)!, .notLooked)
    }

    /// Gives back the room of the lines taken, once they are answered: the buffer is emptied when all is
    /// taken, and moved down once `discardAfter` bytes at its front are taken.
    mutating func compact(discardAfter: Int) {
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
        forgetLooked()
    }
}
