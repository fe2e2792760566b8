#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import EntitledCore

/// The one shape of request line that nearly every check and grant arrives in, read without the general
/// decoder (`CompactCheckDecoder`, `CompactGrantDecoder`): a line that starts with the operation's head
/// (`{"op":"check"`), then `,"key":value` pairs and `}`, with no whitespace, every key and string plain
/// printable ASCII (no escapes, so valid UTF-8 as it is), every value a string of 1 to
/// `Limits.maximumIdentifierBytes` bytes except an `id`, which may also be a whole number.
///
/// Whatever is not in that shape is left to `RequestDecoder.decode`, which reads every line in the shape
/// the same way: the compact decoders only skip the general decoder's work, never decide differently.
enum CompactLine {
    /// Calls `field` with each key after `head` and where its value lies: for `id`, its raw JSON (a
    /// string with its quotes, or a number); for any other key, the bytes between its string's quotes.
    /// Returns `false` as soon as the line leaves the shape or `field` returns `false`.
    @inline(__always)
    static func forEachField(
        in bytes: UnsafeRawBufferPointer, after head: StaticString,
        _ field: (_ key: UnsafeRawBufferPointer, _ value: Range<Int>) -> Bool
    ) -> Bool {
        var end = bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let headCount = head.utf8CodeUnitCount
        guard end > headCount, bytes[end - 1] == UInt8(ascii: "}") else { return false }
        guard memcmp(bytes.baseAddress!, head.utf8Start, headCount) == 0 else { return false }
        var at = headCount
        let last = end - 1  // the closing brace
        while at < last {
            guard bytes[at] == UInt8(ascii: ","), at + 1 < last, bytes[at + 1] == UInt8(ascii: "\"") else { return false }
            guard let keyEnd = plainStringEnd(bytes, from: at + 2, before: last) else { return false }
            let key = UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<keyEnd])
            at = keyEnd + 1
            guard at < last, bytes[at] == UInt8(ascii: ":") else { return false }
            at += 1
            if equals(key, "id") {
                guard let valueEnd = idEnd(bytes, from: at, before: last), field(key, at..<valueEnd) else { return false }
                at = valueEnd
                continue
            }
            guard at < last, bytes[at] == UInt8(ascii: "\""), let valueEnd = plainStringEnd(bytes, from: at + 1, before: last) else {
                return false
            }
            let count = valueEnd - (at + 1)
            guard count > 0, count <= Limits.maximumIdentifierBytes, field(key, (at + 1)..<valueEnd) else { return false }
            at = valueEnd + 1
        }
        return at == last
    }

    /// The bytes of the string value a line starts with when it begins with `head` (which ends with the
    /// value's opening quote), up to the next quote; `nil` when it starts otherwise or the quote does not come.
    @inline(__always)
    static func stringValue(onLine line: UnsafeRawBufferPointer, startingWith head: StaticString) -> UnsafeRawBufferPointer? {
        let prefixCount = head.utf8CodeUnitCount
        guard line.count > prefixCount, let base = line.baseAddress,
            memcmp(base, head.utf8Start, prefixCount) == 0,
            let quote = memchr(base + prefixCount, Int32(UInt8(ascii: "\"")), line.count - prefixCount)
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: line[prefixCount..<base.distance(to: UnsafeRawPointer(quote))])
    }

    /// A plain string value as a String (a String of up to 15 bytes needs no allocation).
    @inline(__always)
    static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    @inline(__always)
    static func equals(_ key: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && memcmp(key.baseAddress!, name.utf8Start, key.count) == 0
    }

    /// Where the plain string starting at `start` (after its opening quote) closes: the index of its
    /// closing quote, or `nil` when it holds a byte outside printable ASCII or a backslash, or does not
    /// close before `limit`.
    @inline(__always)
    private static func plainStringEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, before limit: Int) -> Int? {
        var index = start
        while index < limit {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { return index }
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        return nil
    }

    /// Where an `id` value starting at `start` ends: a plain string, or a whole number without leading
    /// zeros of at most 18 digits.
    private static func idEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, before limit: Int) -> Int? {
        guard start < limit else { return nil }
        if bytes[start] == UInt8(ascii: "\"") {
            return plainStringEnd(bytes, from: start + 1, before: limit).map { $0 + 1 }
        }
        var index = start
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < limit, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        let digits = index - digitsStart
        guard digits > 0, digits <= 18, !(digits > 1 && bytes[digitsStart] == UInt8(ascii: "0")) else { return nil }
        return index
    }
}
