extension Timestamp {
    /// This time `months` calendar months later (earlier when negative), in UTC: the same day of the month
    /// and time of day, or the target month's last day when it is shorter (January 31 plus a month is
    /// February 28, or 29 in a leap year), as stores bill monthly subscriptions. Saturates at the ends of
    /// the representable range.
    func addingCalendarMonths(_ months: Int64) -> Timestamp {
        let (days, millisecondOfDay) = Self.floorDivide(millisecondsSinceEpoch, 86_400_000)
        let (year, month, day) = Self.civilDate(fromDaysSinceEpoch: days)
        // Months counted from year 0 fit easily: years are within ±292 million here.
        let (total, overflow) = (year * 12 + (month - 1)).addingReportingOverflow(months)
        guard !overflow, abs(total / 12) < 200_000_000 else {
            return Timestamp(millisecondsSinceEpoch: months > 0 ? .max : .min)
        }
        let (newYear, monthIndex) = Self.floorDivide(total, 12)
        let newMonth = monthIndex + 1
        let newDay = min(day, Self.daysIn(month: newMonth, of: newYear))
        let newDays = Self.daysSinceEpoch(year: newYear, month: newMonth, day: newDay)
        let (dayStart, overflowed) = newDays.multipliedReportingOverflow(by: 86_400_000)
        guard !overflowed else { return Timestamp(millisecondsSinceEpoch: months > 0 ? .max : .min) }
        let (sum, overflowedSum) = dayStart.addingReportingOverflow(millisecondOfDay)
        guard !overflowedSum else { return Timestamp(millisecondsSinceEpoch: months > 0 ? .max : .min) }
        return Timestamp(millisecondsSinceEpoch: sum)
    }

    /// The number of days of `month` (1-12) in `year` (proleptic Gregorian).
    static func daysIn(month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
