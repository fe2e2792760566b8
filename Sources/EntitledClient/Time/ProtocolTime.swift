/// Times as the protocol writes them: UTC, `YYYY-MM-DDThh:mm:ss[.mmm]Z` (PROTOCOL.md, "Times"), to and
/// from milliseconds since the Unix epoch. The one reading and writing of them for the client's users
/// (the console, the stores' receiver). The server has its own in EntitledCore (`Timestamp+RFC3339`,
/// which also reads offsets and other fractions): the client does not depend on the server's modules,
/// nor they on it.
public enum ProtocolTime {
    /// `2026-11-26T12:00:00Z`, with `.123` when `milliseconds` has a fraction of a second (always, as
    /// `.000` too, with `alwaysWithMilliseconds`).
    public static func string(milliseconds: Int64, alwaysWithMilliseconds: Bool = false) -> String {
        let days = floorDivide(milliseconds, 86_400_000)
        let within = milliseconds - days * 86_400_000
        let (year, month, day) = civilFromDays(days)
        func digits(_ value: Int64, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        var text = "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(within / 3_600_000, 2)):"
            + "\(digits(within / 60_000 % 60, 2)):\(digits(within / 1000 % 60, 2))"
        if alwaysWithMilliseconds || within % 1000 != 0 { text += "." + digits(within % 1000, 3) }
        return text + "Z"
    }

    /// The milliseconds since the epoch of a time as the protocol writes it (`2026-11-26T12:00:00Z` or
    /// `2026-11-26T12:00:00.123Z`); `nil` for any other text.
    public static func milliseconds(_ text: String) -> Int64? {
        // The protocol's form is a strict part of RFC 3339: `T` and `Z` in upper case, no fraction or three
        // digits of one, no offset. The fields are read by the one RFC 3339 reader.
        let bytes = text.utf8
        guard bytes.count == 20 || bytes.count == 24, bytes.last == UInt8(ascii: "Z"),
            bytes[bytes.index(bytes.startIndex, offsetBy: 10)] == UInt8(ascii: "T"),
            bytes.count == 20 || bytes[bytes.index(bytes.startIndex, offsetBy: 19)] == UInt8(ascii: ".")
        else { return nil }
        return rfc3339Milliseconds(text)
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

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }
}
