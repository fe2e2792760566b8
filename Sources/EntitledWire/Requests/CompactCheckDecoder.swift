#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import EntitledCore
import NIOCore

/// A `check` line decoded by `CompactCheckDecoder`: the raw `id` to echo and the query.
public struct CompactCheck: Sendable {
    public var id: ByteBuffer?
    public var query: AccessQuery
}

/// Reads the one shape of line that nearly every check arrives in, without the general decoder:
/// `{"op":"check",...}` with no whitespace, `op` first, then `user`, `device`, `product`, `entitlement`
/// and `id` in any order, each at most once, every string plain printable ASCII (no escapes) and a
/// valid identifier, an `id` a plain string or a whole number.
///
/// Anything else (another field, `null`, an escape, whitespace, an empty or too long value, an `at` or
/// `minSeq`, an operation the connection may not run) gives `nil`, and the line goes through
/// `RequestDecoder.decode`, which gives the same answer for every line this accepts: this only skips the
/// general decoder's work, never decides differently. Measured (perf, 50 connections pipelining 16
/// checks, release build on 2 cores): the general decoder, its `RequestFields` and the copies of the
/// `Request` it builds were about 16% of the server's CPU per check.
public enum CompactCheckDecoder {
    private static let head: StaticString = #"{"op":"check""#
    /// `head` and the start of a `user` written first, as nearly every client writes a check.
    private static let headOfUserCheck: StaticString = #"{"op":"check","user":""#

    /// The bytes of the user id that the check on `line` names, when the line starts as checks written
    /// the usual way do (`op`, then `user`): a look for a prefetch (`EntitlementStore.prefetchingUsers`),
    /// not a decode. It may give bytes of a line that `decode` later declines, and nothing for a check
    /// written another way; what it gives decides nothing.
    @inline(__always)
    public static func userOfCheck(onLine line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        stringValue(onLine: line, startingWith: headOfUserCheck)
    }

    /// The bytes of a string value that `line` starts with `head` (which ends with the value's opening
    /// quote) up to the next quote; `nil` when the line starts otherwise or the quote does not come.
    @inline(__always)
    static func stringValue(onLine line: UnsafeRawBufferPointer, startingWith head: StaticString) -> UnsafeRawBufferPointer? {
        let prefixCount = head.utf8CodeUnitCount
        guard line.count > prefixCount, let base = line.baseAddress,
            memcmp(base, head.utf8Start, prefixCount) == 0,
            let quote = memchr(base + prefixCount, Int32(UInt8(ascii: "\"")), line.count - prefixCount)
        else { return nil }
        return UnsafeRawBufferPointer(rebasing: line[prefixCount..<base.distance(to: UnsafeRawPointer(quote))])
    }

    /// The check `line` asks for, or `nil` when it is not in the compact shape.
    public static func decode(line: ByteBuffer, permitting permissions: OperationPermissions) -> CompactCheck? {
        guard permissions.allows(.check) else { return nil }
        return line.withUnsafeReadableBytes { bytes -> CompactCheck? in
            guard let found = scan(bytes) else { return nil }
            guard let subject = Subject(user: found.user, device: found.device) else { return nil }
            let filter: AccessFilter
            switch (found.product, found.entitlement) {
            case (.some, .some): return nil
            case (.some(let product), nil): filter = .product(product)
            case (nil, .some(let entitlement)): filter = .entitlement(entitlement)
            case (nil, nil): filter = .anyProduct
            }
            let id = found.id.flatMap { line.getSlice(at: line.readerIndex + $0.lowerBound, length: $0.count) }
            return CompactCheck(id: id, query: AccessQuery(subject: subject, filter: filter))
        }
    }

    private struct Fields {
        var user: String?
        var device: String?
        var product: String?
        var entitlement: String?
        var id: Range<Int>?
    }

    private static func scan(_ bytes: UnsafeRawBufferPointer) -> Fields? {
        var end = bytes.count
        if end > 0, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let headCount = head.utf8CodeUnitCount
        guard end > headCount, bytes[end - 1] == UInt8(ascii: "}") else { return nil }
        guard memcmp(bytes.baseAddress!, head.utf8Start, headCount) == 0 else { return nil }
        var fields = Fields()
        var at = headCount
        let last = end - 1  // the closing brace
        while at < last {
            guard bytes[at] == UInt8(ascii: ","), at + 1 < last, bytes[at + 1] == UInt8(ascii: "\"") else { return nil }
            guard let keyEnd = plainStringEnd(bytes, from: at + 2, before: last) else { return nil }
            let key = UnsafeRawBufferPointer(rebasing: bytes[(at + 2)..<keyEnd])
            at = keyEnd + 1
            guard at < last, bytes[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            if equals(key, "id") {
                guard fields.id == nil, let valueEnd = idEnd(bytes, from: at, before: last) else { return nil }
                fields.id = at..<valueEnd
                at = valueEnd
                continue
            }
            guard at < last, bytes[at] == UInt8(ascii: "\""), let valueEnd = plainStringEnd(bytes, from: at + 1, before: last) else {
                return nil
            }
            let count = valueEnd - (at + 1)
            guard count > 0, count <= Limits.maximumIdentifierBytes else { return nil }
            // Plain ASCII: valid UTF-8 as it is, and a String of up to 15 bytes needs no allocation.
            let value = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(at + 1)..<valueEnd]), as: UTF8.self)
            if equals(key, "user") {
                guard fields.user == nil else { return nil }
                fields.user = value
            } else if equals(key, "device") {
                guard fields.device == nil else { return nil }
                fields.device = value
            } else if equals(key, "entitlement") {
                guard fields.entitlement == nil else { return nil }
                fields.entitlement = value
            } else if equals(key, "product") {
                guard fields.product == nil else { return nil }
                fields.product = value
            } else {
                return nil
            }
            at = valueEnd + 1
        }
        return at == last ? fields : nil
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

    @inline(__always)
    private static func equals(_ key: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        key.count == name.utf8CodeUnitCount && memcmp(key.baseAddress!, name.utf8Start, key.count) == 0
    }
}
