#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Times as the console reads and shows them. The server writes every time in UTC as
/// `YYYY-MM-DDThh:mm:ss[.mmm]Z` (read and written by `ProtocolTime`); the console shows it as written,
/// with a relative hint beside it.
public enum ConsoleTime {
    /// A time typed in a command, as the request will carry it: a bare date (`2027-01-01`) means midnight
    /// UTC; anything else is passed on for the server to validate.
    public static func requestTime(from text: String) -> String {
        let bytes = Array(text.utf8)
        let isDate = bytes.count == 10 && bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-")
            && bytes.enumerated().allSatisfy { index, byte in index == 4 || index == 7 || (0x30...0x39).contains(byte) }
        return isDate ? text + "T00:00:00Z" : text
    }

    /// Whether a word has the shape of a TIME: it starts with a date, `YYYY-MM-DD` (a bare date, or an RFC
    /// 3339 time such as `2027-01-01T09:00:00Z`). Only the shape, to tell a TIME from a DURATION; the
    /// server validates the rest.
    public static func looksLikeTime(_ word: String) -> Bool {
        let bytes = Array(word.utf8.prefix(11))
        guard bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        let isDate = bytes.prefix(10).enumerated().allSatisfy { index, byte in index == 4 || index == 7 || (0x30...0x39).contains(byte) }
        return isDate && (bytes.count == 10 || bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"))
    }

    /// The units of a protocol duration (Protocol/PROTOCOL.md, "Durations").
    public static let durationUnits = ["s", "min", "h", "d", "w", "mo", "y"]

    /// Whether a word has the shape of a protocol duration: digits, then one of `durationUnits`.
    public static func looksLikeDuration(_ word: String) -> Bool {
        let digits = word.prefix { $0.isASCII && $0.isNumber }
        return !digits.isEmpty && durationUnits.contains(String(word.dropFirst(digits.count)))
    }

    /// Whether a word is digits and `m`: minutes or months, which the console does not guess.
    public static func isMinutesOrMonths(_ word: String) -> Bool {
        word.count >= 2 && word.last == "m" && word.dropLast().allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The current time, in milliseconds since the Unix epoch.
    public static func nowMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// "in 29 days", "3 hours ago", "just now": how far `time` is from `now`, roughly, for a person.
    public static func relative(_ time: Int64, now: Int64) -> String {
        let delta = time - now
        let distance = delta.magnitude
        let second: UInt64 = 1000
        let units: [(size: UInt64, name: String)] = [
            (365 * 86_400 * second, "year"), (30 * 86_400 * second, "month"), (86_400 * second, "day"),
            (3600 * second, "hour"), (60 * second, "minute"), (second, "second"),
        ]
        guard distance >= 10 * second else { return "just now" }
        // Days up to 60 read better than "2 months"; months up to 2 years.
        let unit =
            distance < 60 * 86_400 * second
            ? units.dropFirst(2).first { distance >= $0.size }!
            : (distance < 2 * 365 * 86_400 * second ? units[1] : units[0])
        let count = distance / unit.size
        let phrase = "\(count) \(unit.name)\(count == 1 ? "" : "s")"
        return delta > 0 ? "in \(phrase)" : "\(phrase) ago"
    }
}
