/// A length of time, as the protocol writes it: a positive whole number and a unit, `"90s"`, `"15min"`,
/// `"12h"`, `"30d"`, `"2w"`, `"1mo"` or `"1y"`.
///
/// Months and years are the calendar's (UTC): a month from January 31 is the last day of February, a
/// year from February 29 is February 28, so "a month" of access is what a store's monthly subscription
/// gives, not 30 days. Seconds to weeks are fixed lengths. A span is either: `months` and `milliseconds`
/// are never both set by the parser.
public struct TimeSpan: Hashable, Sendable {
    /// Calendar months (a year is 12), added first (`Timestamp.adding(_:)`).
    public var months: Int64
    /// Fixed milliseconds, added after the months.
    public var milliseconds: Int64

    @inlinable
    public init(milliseconds: Int64) {
        self.months = 0
        self.milliseconds = milliseconds
    }

    @inlinable
    public init(months: Int64, milliseconds: Int64 = 0) {
        self.months = months
        self.milliseconds = milliseconds
    }

    public static func seconds(_ value: Int64) -> TimeSpan { TimeSpan(milliseconds: value * 1000) }
    public static func minutes(_ value: Int64) -> TimeSpan { .seconds(value * 60) }
    public static func hours(_ value: Int64) -> TimeSpan { .minutes(value * 60) }
    public static func days(_ value: Int64) -> TimeSpan { .hours(value * 24) }
    public static func weeks(_ value: Int64) -> TimeSpan { .days(value * 7) }
    public static func months(_ value: Int64) -> TimeSpan { TimeSpan(months: value) }
    public static func years(_ value: Int64) -> TimeSpan { TimeSpan(months: value * 12) }
}

extension TimeSpan {
    /// Why a text is not a span.
    public enum ParseError: Error, Hashable, Sendable {
        /// `"15m"`: minutes or months? Neither is guessed.
        case minutesOrMonths
        /// Not a positive whole number of at most 12 digits and one known unit.
        case malformed
        /// Longer than `TimeSpan.maximum`.
        case tooLong
    }

    /// A unit as written, and what one of it is.
    enum Unit {
        case fixed(milliseconds: Int64)
        case calendarMonths(Int64)
    }

    /// The units a span may be written in.
    static let units: [String: Unit] = [
        "s": .fixed(milliseconds: 1000),
        "min": .fixed(milliseconds: 60_000),
        "h": .fixed(milliseconds: 3_600_000),
        "d": .fixed(milliseconds: 86_400_000),
        "w": .fixed(milliseconds: 604_800_000),
        "mo": .calendarMonths(1),
        "y": .calendarMonths(12),
    ]

    /// The longest span accepted: 1000 years is far past any subscription and far from overflowing.
    /// Fixed units may add up to 365 250 days; calendar ones to 12 000 months.
    public static let maximum = TimeSpan.days(365_250)
    public static let maximumMonths: Int64 = 12_000

    /// Parses `"30d"` or `"1mo"`. Returns `nil` for anything else: no sign, no fraction, no spaces, no
    /// zero, no span longer than `TimeSpan.maximum` (`parse(_:)` says why).
    public init?(parsing text: String) {
        guard case .success(let span) = Self.parse(text) else { return nil }
        self = span
    }

    /// Parses `"30d"` or `"1mo"`, or says why it is not a span.
    public static func parse(_ text: String) -> Result<TimeSpan, ParseError> {
        let utf8 = Array(text.utf8)
        let digitCount = utf8.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
        // 12 digits hold 1000 years even in seconds, and cannot overflow Int64 before the checks below.
        guard digitCount >= 1, digitCount <= 12, digitCount < utf8.count else { return .failure(.malformed) }
        let unitText = String(decoding: utf8[digitCount...], as: UTF8.self)
        if unitText == "m" { return .failure(.minutesOrMonths) }
        guard let unit = units[unitText] else { return .failure(.malformed) }
        var count: Int64 = 0
        for digit in utf8[..<digitCount] { count = count * 10 + Int64(digit - UInt8(ascii: "0")) }
        guard count > 0 else { return .failure(.malformed) }
        switch unit {
        case .fixed(let length):
            let (milliseconds, overflow) = count.multipliedReportingOverflow(by: length)
            guard !overflow, milliseconds <= maximum.milliseconds else { return .failure(.tooLong) }
            return .success(TimeSpan(milliseconds: milliseconds))
        case .calendarMonths(let months):
            guard count <= maximumMonths / months else { return .failure(.tooLong) }
            return .success(TimeSpan(months: count * months))
        }
    }
}
