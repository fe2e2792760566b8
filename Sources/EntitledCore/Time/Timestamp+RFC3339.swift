// RFC 3339 by hand rather than through Foundation's ISO8601DateFormatter: responses on the check path
// carry an `expiresAt`, and formatting it here costs a few dozen integer operations into a stack buffer,
// no allocation and no locale machinery.

extension Timestamp {
    /// The longest text `withRFC3339Bytes` produces: `"9999-12-31T23:59:59.999Z"` (years are clamped to four digits).
    public static let maximumRFC3339Length = 24

    /// The earliest and latest times that RFC 3339 (four-digit years) can write.
    public static let rfc3339Range: ClosedRange<Timestamp> =
        Timestamp(millisecondsSinceEpoch: -62_167_219_200_000)...Timestamp(millisecondsSinceEpoch: 253_402_300_799_999)

    /// Parses an RFC 3339 date-time such as `2026-12-21T00:00:00Z`, `2026-12-21T01:30:00.250+01:30`
    /// or `2026-12-21 00:00:00z`. Fractions finer than a millisecond are truncated. Returns `nil` for
    /// anything that is not a valid RFC 3339 date-time (including impossible dates such as February 30).
    public init?(rfc3339 text: String) {
        var text = text
        guard let parsed = text.withUTF8({ Timestamp.parseRFC3339($0) }) else { return nil }
        self = parsed
    }

    /// As `init?(rfc3339:)`, from the text's UTF-8 bytes (a request line's, without making a String).
    public init?(rfc3339UTF8 bytes: UnsafeRawBufferPointer) {
        let utf8 = UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        guard let parsed = Timestamp.parseRFC3339(utf8) else { return nil }
        self = parsed
    }

    /// The UTC RFC 3339 form: `2026-12-21T00:00:00Z`, with `.mmm` only when the milliseconds are not zero.
    public var rfc3339: String {
        withRFC3339Bytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the UTC RFC 3339 form of this time in a temporary buffer (no heap allocation).
    /// Times outside `rfc3339Range` are clamped to it.
    public func withRFC3339Bytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.maximumRFC3339Length) { buffer in
            let count = writeRFC3339(into: buffer)
            return try body(UnsafeBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    /// Writes the UTC RFC 3339 form of this time at the start of `memory`, which must hold at least
    /// `maximumRFC3339Length` bytes, and returns its length. Times outside `rfc3339Range` are clamped.
    ///
    /// Not generic, unlike `withRFC3339Bytes`: called from another module, that one looked up the
    /// metadata of its generic temporary buffer on every call (about 1% of a grant's CPU in `perf`, for
    /// the two times of each membership answered).
    public func writeRFC3339(into memory: UnsafeMutableRawBufferPointer) -> Int {
        precondition(memory.count >= Self.maximumRFC3339Length, "an RFC 3339 time needs \(Self.maximumRFC3339Length) bytes")
        return writeRFC3339(into: memory.bindMemory(to: UInt8.self))
    }

    private func writeRFC3339(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let clamped = min(max(self, Self.rfc3339Range.lowerBound), Self.rfc3339Range.upperBound)
        let milliseconds = clamped.millisecondsSinceEpoch
        let (days, millisecondOfDay) = Self.floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = Self.civilDate(fromDaysSinceEpoch: days)
        let secondOfDay = millisecondOfDay / 1000
        let fraction = millisecondOfDay % 1000

        var index = 0
        func put(_ value: Int64, digits: Int) {
            var value = value
            var position = index + digits - 1
            while position >= index {
                buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                position -= 1
            }
            index += digits
        }
        func put(_ byte: Unicode.Scalar) {
            buffer[index] = UInt8(ascii: byte)
            index += 1
        }
        put(year, digits: 4)
        put("-")
        put(month, digits: 2)
        put("-")
        put(day, digits: 2)
        put("T")
        put(secondOfDay / 3600, digits: 2)
        put(":")
        put(secondOfDay / 60 % 60, digits: 2)
        put(":")
        put(secondOfDay % 60, digits: 2)
        if fraction != 0 {
            put(".")
            put(fraction, digits: 3)
        }
        put("Z")
        return index
    }

    static func parseRFC3339(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var index = 0
        func digits(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }
        func expect(_ accepted: Unicode.Scalar...) -> Bool {
            guard index < bytes.count, accepted.contains(where: { UInt8(ascii: $0) == bytes[index] }) else {
                return false
            }
            index += 1
            return true
        }

        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            expect("T", "t", " "),
            let hour = digits(2), expect(":"), let minute = digits(2), expect(":"), let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }

        var fractionMilliseconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var fractionDigits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if fractionDigits < 3 {
                    fractionMilliseconds = fractionMilliseconds * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                }
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0 else { return nil }
            for _ in fractionDigits..<max(fractionDigits, 3) { fractionMilliseconds *= 10 }
        }

        var offsetSeconds: Int64 = 0
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = digits(2), expect(":"), let offsetMinutes = digits(2),
                offsetHours <= 23, offsetMinutes <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        default:
            return nil
        }
        guard index == bytes.count else { return nil }

        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Timestamp(millisecondsSinceEpoch: seconds * 1000 + fractionMilliseconds)
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, after Howard Hinnant's `days_from_civil`).

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400).quotient
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilDate(fromDaysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097).quotient
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
