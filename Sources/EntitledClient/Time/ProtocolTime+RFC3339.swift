extension ProtocolTime {
    /// The milliseconds since the epoch of an RFC 3339 time as the stores write it: `T` or `t` between date
    /// and time, any number of fraction digits (read to the millisecond, the rest dropped: Google writes
    /// nanoseconds), and `Z`, `z` or an offset `±hh:mm`; `nil` for anything else, a field out of its range
    /// included. The one reader of the stores' times (Google Play's, Whop's), where
    /// `milliseconds(_:)` reads only the protocol's own form.
    public static func rfc3339Milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 64, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                guard (0x30...0x39).contains(bytes[index]) else { return nil }
                value = value * 10 + Int64(bytes[index] - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        var millisecond: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                if index - start < 3 { millisecond = millisecond * 10 + Int64(bytes[index] - 0x30) }
                index += 1
            }
            guard index > start else { return nil }
            for _ in min(index - start, 3)..<3 { millisecond *= 10 }
        }
        guard index < bytes.count else { return nil }
        var offsetMinutes: Int64 = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                let offsetHours = number(index + 1..<index + 3), let minutes = number(index + 4..<index + 6), offsetHours < 24, minutes < 60
            else { return nil }
            offsetMinutes = (offsetHours * 60 + minutes) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        return ((days * 24 + hour) * 60 + minute - offsetMinutes) * 60_000 + second * 1000 + millisecond
    }
}
