import Testing

@testable import EntitledCore

@Suite struct TimeSpanTests {
    @Test func secondsMinutesHoursDaysAndWeeksParseToTheirLength() throws {
        #expect(TimeSpan(parsing: "90s")?.milliseconds == 90_000)
        #expect(TimeSpan(parsing: "15m")?.milliseconds == 900_000)
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
        #expect(TimeSpan(parsing: "1y") == nil)
        #expect(TimeSpan(parsing: "100ms") == nil)
        #expect(TimeSpan(parsing: "1dd") == nil)
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
    }
}
