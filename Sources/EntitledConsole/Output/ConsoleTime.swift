#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Times as the console reads and shows them. The server writes every time in UTC as
/// `YYYY-MM-DDThh:mm:ss[.mmm]Z`; the console shows it as written, with a relative hint beside it.
public enum ConsoleTime {
    /// A time typed in a command, as the request will carry it: a bare date (`2027-01-01`) means midnight
    /// UTC; anything else is passed on for the server to validate.
    public static func requestTime(from text: String) -> String {
        let bytes = Array(text.utf8)
        let isDate = bytes.count == 10 && bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-")
            && bytes.enumerated().allSatisfy { index, byte in index == 4 || index == 7 || (0x30...0x39).contains(byte) }
        return isDate ? text + "T00:00:00Z" : text
    }

    /// Whether a word has the shape of a protocol duration: digits, then one of s, m, h, d, w.
    public static func looksLikeDuration(_ word: String) -> Bool {
        guard let unit = word.last, "smhdw".contains(unit), word.count >= 2 else { return false }
        return word.dropLast().allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Milliseconds since the Unix epoch of a UTC time as the server writes it; `nil` for other text.
    public static func milliseconds(fromServerTime text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z"), bytes[10] == UInt8(ascii: "T") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(bytes[index]) else { return nil }
                value = value * 10 + Int64(bytes[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var millisecond: Int64 = 0
        if bytes.count == 24, bytes[19] == UInt8(ascii: ".") {
            guard let fraction = number(20..<23) else { return nil }
            millisecond = fraction
        } else if bytes.count != 20 {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
    }

    /// A moment as the server writes times: UTC, with milliseconds (`2026-11-22T12:00:00.000Z`).
    public static func serverTime(milliseconds: Int64) -> String {
        let days = floorDivide(milliseconds, 86_400_000)
        let within = milliseconds - days * 86_400_000
        let (year, month, day) = civilFromDays(days)
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(within / 3_600_000, 2)):"
            + "\(digits(within / 60_000 % 60, 2)):\(digits(within / 1000 % 60, 2)).\(digits(within % 1000, 3))Z"
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

    /// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
