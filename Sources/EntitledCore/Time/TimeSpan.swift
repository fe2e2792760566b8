/// A length of time, as the protocol writes it: a positive whole number and a unit,
/// `"90s"`, `"15m"`, `"12h"`, `"30d"` or `"2w"`.
public struct TimeSpan: Hashable, Sendable {
    /// The span in milliseconds.
    public var milliseconds: Int64

    @inlinable
    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static func seconds(_ value: Int64) -> TimeSpan { TimeSpan(milliseconds: value * 1000) }
    public static func minutes(_ value: Int64) -> TimeSpan { .seconds(value * 60) }
    public static func hours(_ value: Int64) -> TimeSpan { .minutes(value * 60) }
    public static func days(_ value: Int64) -> TimeSpan { .hours(value * 24) }
    public static func weeks(_ value: Int64) -> TimeSpan { .days(value * 7) }
}

extension TimeSpan {
    /// The units a span may be written in, with their length in milliseconds.
    static let unitMilliseconds: [UInt8: Int64] = [
        UInt8(ascii: "s"): 1000,
        UInt8(ascii: "m"): 60_000,
        UInt8(ascii: "h"): 3_600_000,
        UInt8(ascii: "d"): 86_400_000,
        UInt8(ascii: "w"): 604_800_000,
    ]

    /// The longest span accepted: 1000 years is far past any subscription and far from overflowing.
    public static let maximum = TimeSpan.days(365_250)

    /// Parses `"30d"` and its kind. Returns `nil` for anything else: no sign, no fraction, no spaces,
    /// no zero, no span longer than `TimeSpan.maximum`.
    public init?(parsing text: String) {
        var utf8 = Array(text.utf8)
        guard utf8.count >= 2, let unit = utf8.popLast(), let unitLength = Self.unitMilliseconds[unit] else {
            return nil
        }
        // 12 digits hold 1000 years even in seconds, and cannot overflow Int64 before the check below.
        guard utf8.count <= 12 else { return nil }
        var count: Int64 = 0
        for digit in utf8 {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            count = count * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        guard count > 0 else { return nil }
        let (milliseconds, overflow) = count.multipliedReportingOverflow(by: unitLength)
        guard !overflow, milliseconds <= Self.maximum.milliseconds else { return nil }
        self.init(milliseconds: milliseconds)
    }
}
