import Testing

@testable import EntitledCore

@Suite struct TimeSpanTests {
    @Test func secondsMinutesHoursDaysAndWeeksParseToTheirLength() throws {
        #expect(TimeSpan(parsing: "90s")?.milliseconds == 90_000)
        #expect(TimeSpan(parsing: "15min")?.milliseconds == 900_000)
        #expect(TimeSpan(parsing: "15min") == .minutes(15))
        #expect(TimeSpan(parsing: "12h")?.milliseconds == 43_200_000)
        #expect(TimeSpan(parsing: "30d")?.milliseconds == 2_592_000_000)
        #expect(TimeSpan(parsing: "2w")?.milliseconds == 1_209_600_000)
        #expect(TimeSpan(parsing: "1s") == .seconds(1))
        #expect(TimeSpan(parsing: "30d") == .days(30))
    }

    @Test func aZeroSpanIsRejected() throws {
        #expect(TimeSpan(parsing: "0d") == nil)
        #expect(TimeSpan(parsing: "000s") == nil)
    }

    @Test func aNegativeSpanIsRejected() throws {
        #expect(TimeSpan(parsing: "-1d") == nil)
        #expect(TimeSpan(parsing: "+1d") == nil)
    }

    @Test func aFractionalSpanIsRejected() throws {
        #expect(TimeSpan(parsing: "1.5d") == nil)
    }

    @Test func aUnitWithoutANumberIsRejected() throws {
        #expect(TimeSpan(parsing: "d") == nil)
        #expect(TimeSpan(parsing: "") == nil)
    }

    @Test func aNumberWithoutAUnitIsRejected() throws {
        #expect(TimeSpan(parsing: "30") == nil)
    }

    @Test func aSpaceBetweenNumberAndUnitIsRejected() throws {
        #expect(TimeSpan(parsing: "30 d") == nil)
        #expect(TimeSpan(parsing: " 30d") == nil)
        #expect(TimeSpan(parsing: "30d ") == nil)
    }

    @Test func unitsAreLowercaseOnly() throws {
        #expect(TimeSpan(parsing: "30D") == nil)
        #expect(TimeSpan(parsing: "2W") == nil)
        #expect(TimeSpan(parsing: "90S") == nil)
    }

    @Test func longSpansUnderAThousandYearsAreAccepted() throws {
        #expect(TimeSpan(parsing: "9999999999s") == .seconds(9_999_999_999))  // about 317 years
        #expect(TimeSpan(parsing: "52178w") == .weeks(52_178))
    }

    @Test func otherUnitsAreRejected() throws {
        #expect(TimeSpan(parsing: "100ms") == nil)
        #expect(TimeSpan(parsing: "1dd") == nil)
        #expect(TimeSpan(parsing: "1month") == nil)
        #expect(TimeSpan(parsing: "1yr") == nil)
        #expect(TimeSpan(parsing: "1MO") == nil)
        #expect(TimeSpan.parse("1mins") == .failure(.malformed))
    }

    @Test func monthsAndYearsAreCalendarMonths() throws {
        #expect(TimeSpan(parsing: "1mo") == .months(1))
        #expect(TimeSpan(parsing: "18mo") == TimeSpan(months: 18))
        #expect(TimeSpan(parsing: "1y") == .years(1))
        #expect(TimeSpan(parsing: "1y")?.months == 12)
        #expect(TimeSpan(parsing: "1y")?.milliseconds == 0)
    }

    @Test func mAloneIsNeitherMinutesNorMonths() throws {
        #expect(TimeSpan.parse("15m") == .failure(.minutesOrMonths))
        #expect(TimeSpan(parsing: "1m") == nil)
        #expect(TimeSpan.parse("0m") == .failure(.minutesOrMonths), "named for what it says, before its number is looked at")
    }

    @Test func calendarMonthsKeepTheDayOrTakeTheMonthsLastDay() throws {
        func plus(_ span: String, _ time: String) throws -> String {
            let start = try #require(Timestamp(rfc3339: time))
            return start.adding(try #require(TimeSpan(parsing: span))).rfc3339
        }
        #expect(try plus("1mo", "2027-01-15T10:30:00.250Z") == "2027-02-15T10:30:00.250Z")
        #expect(try plus("1mo", "2027-01-31T23:59:59Z") == "2027-02-28T23:59:59Z")
        #expect(try plus("1mo", "2028-01-31T00:00:00Z") == "2028-02-29T00:00:00Z")  // a leap year
        #expect(try plus("1mo", "2027-03-31T00:00:00Z") == "2027-04-30T00:00:00Z")
        #expect(try plus("1mo", "2027-12-31T12:00:00Z") == "2028-01-31T12:00:00Z")
        #expect(try plus("3mo", "2027-11-30T00:00:00Z") == "2028-02-29T00:00:00Z")
        #expect(try plus("1y", "2028-02-29T08:00:00Z") == "2029-02-28T08:00:00Z")
        #expect(try plus("4y", "2028-02-29T08:00:00Z") == "2032-02-29T08:00:00Z")
        #expect(try plus("12mo", "2027-05-20T00:00:00Z") == (try plus("1y", "2027-05-20T00:00:00Z")))
        #expect(try plus("1000y", "2027-05-20T00:00:00Z") == "3027-05-20T00:00:00Z")
        // Not the same as 30 days: February is shorter, March longer.
        #expect(try plus("1mo", "2027-02-01T00:00:00Z") == "2027-03-01T00:00:00Z")
        #expect(try plus("30d", "2027-02-01T00:00:00Z") == "2027-03-03T00:00:00Z")
    }

    @Test func spansLongerThanAThousandYearsAreRejected() throws {
        #expect(TimeSpan(parsing: "365250d") == TimeSpan.maximum)
        #expect(TimeSpan(parsing: "365251d") == nil)
        #expect(TimeSpan(parsing: "52179w") == nil)
        #expect(TimeSpan(parsing: "999999999w") == nil)
        #expect(TimeSpan(parsing: "31557600000s") == TimeSpan.maximum)  // 1000 years in seconds
        #expect(TimeSpan(parsing: "31557600001s") == nil)
        #expect(TimeSpan(parsing: "999999999999s") == nil)
        #expect(TimeSpan(parsing: "999999999999w") == nil)  // would overflow Int64 milliseconds
        #expect(TimeSpan(parsing: "99999999999999999999999d") == nil)
        #expect(TimeSpan(parsing: "12000mo") == .months(12_000))
        #expect(TimeSpan.parse("12001mo") == .failure(.tooLong))
        #expect(TimeSpan(parsing: "1000y") == .years(1000))
        #expect(TimeSpan.parse("1001y") == .failure(.tooLong))
        #expect(TimeSpan.parse("52179w") == .failure(.tooLong))
    }
}
