import EntitledClient
import EntitledConsole
import Testing

/// Times as the console reads them from commands and from the server, and the relative hints it shows.
@Suite struct ConsoleTimeTests {
    typealias I = Instants

    // MARK: requestTime

    @Test func aBareDateMeansMidnightUTC() {
        #expect(ConsoleTime.requestTime(from: "2027-01-01") == "2027-01-01T00:00:00Z")
        #expect(ConsoleTime.requestTime(from: "1999-12-31") == "1999-12-31T00:00:00Z")
    }

    @Test func anythingButABareDateIsPassedOnForTheServerToJudge() {
        for text in ["2027-01-01T10:00:00Z", "2027-12-21T00:00:00+01:00", "2027-1-1", "2027/01/01", "2027-01-0x", "27-01-2027", "tomorrow", ""] {
            #expect(ConsoleTime.requestTime(from: text) == text, "\(text)")
        }
    }

    // MARK: looksLikeDuration

    @Test func digitsAndOneUnitLookLikeADuration() {
        for word in ["45s", "90min", "12h", "30d", "2w", "0d", "1000000d", "1mo", "18mo", "1y"] {
            #expect(ConsoleTime.looksLikeDuration(word), "\(word)")
        }
    }

    @Test func otherWordsDoNotLookLikeADuration() {
        for word in ["", "d", "30", "30D", "30Y", "1.5h", "-1d", "+1d", "30dd", "d30", "3 d", "\u{FF13}\u{FF10}d", "90m", "1month", "1yr", "mo"] {
            #expect(!ConsoleTime.looksLikeDuration(word), "\(word)")
        }
    }

    // MARK: looksLikeTime

    @Test func aDateOrATimeStartingWithADateLooksLikeATime() {
        for word in ["2027-01-01", "2027-01-01T09:00:00Z", "2027-12-21T00:00:00+01:00", "2027-01-01t09:00:00z", "2027-01-01T"] {
            #expect(ConsoleTime.looksLikeTime(word), "\(word)")
        }
    }

    @Test func durationsAndOtherWordsDoNotLookLikeATime() {
        for word in ["", "1mo", "30d", "2027", "2027-01", "2027-1-1", "2027/01/01", "27-01-2027", "2027-01-0x", "2027-01-01X", "2027-01-01 ", "tomorrow"] {
            #expect(!ConsoleTime.looksLikeTime(word), "\(word)")
        }
    }

    // MARK: serverTime(milliseconds:)

    @Test func aMomentIsWrittenAsTheServerWritesTimesWithMilliseconds() {
        #expect(ProtocolTime.string(milliseconds: 0, alwaysWithMilliseconds: true) == "1970-01-01T00:00:00.000Z")
        #expect(ProtocolTime.string(milliseconds: I.afterExamples, alwaysWithMilliseconds: true) == "2026-11-22T12:00:00.000Z")
        #expect(ProtocolTime.string(milliseconds: 1_798_761_599_999, alwaysWithMilliseconds: true) == "2026-12-31T23:59:59.999Z")
        #expect(ProtocolTime.string(milliseconds: 951_782_400_000 + 45_296_007, alwaysWithMilliseconds: true) == "2000-02-29T12:34:56.007Z")
        #expect(ProtocolTime.string(milliseconds: -1, alwaysWithMilliseconds: true) == "1969-12-31T23:59:59.999Z")
    }

    @Test func aWrittenMomentReadsBackAsTheSameMilliseconds() {
        for moment: Int64 in [0, 1, 999, I.afterExamples, I.afterExamples + 59 * I.day + 7, 4_102_444_800_000, 253_402_300_799_999] {
            #expect(ProtocolTime.milliseconds(ProtocolTime.string(milliseconds: moment, alwaysWithMilliseconds: true)) == moment, "\(moment)")
        }
    }

    // MARK: milliseconds(fromServerTime:)

    @Test func serverTimesAreMillisecondsSinceTheEpoch() {
        #expect(ProtocolTime.milliseconds("1970-01-01T00:00:00Z") == 0)
        #expect(ProtocolTime.milliseconds("1970-01-01T00:00:00.001Z") == 1)
        #expect(ProtocolTime.milliseconds("2027-01-01T00:00:00Z") == 1_798_761_600_000)
        #expect(ProtocolTime.milliseconds("2026-11-22T00:31:45.833Z") == 1_795_307_505_833)
        #expect(ProtocolTime.milliseconds("2026-11-22T12:00:00Z") == I.afterExamples)
        #expect(ProtocolTime.milliseconds("2027-12-20T23:00:00Z") == 1_829_343_600_000)
    }

    @Test func leapDaysAndTimesBeforeTheEpochAreCounted() {
        #expect(ProtocolTime.milliseconds("2000-02-29T12:34:56.789Z") == 951_827_696_789)
        #expect(ProtocolTime.milliseconds("2000-03-01T00:00:00Z") == 951_868_800_000)
        #expect(ProtocolTime.milliseconds("1969-12-31T23:59:59Z") == -1000)
    }

    @Test func textNotShapedLikeAServerTimeIsNotATime() {
        for text in [
            "", "2027-01-01", "2027-12-21T00:00:00+01:00", "2026-11-22T00:31:45.8Z", "2026-11-22T00:31:45.833123Z",
            "2026-11-22 00:31:45Z", "2026-11-22T00:31:4xZ", "2026-11-22T00:31:45.83xZ", "2026-11-22T00:31:45z",
        ] {
            #expect(ProtocolTime.milliseconds(text) == nil, "\(text)")
        }
    }

    @Test func theClockReadsAPlausibleTime() {
        let now = ConsoleTime.nowMilliseconds()
        #expect(now > 1_735_689_600_000)  // after 2025-01-01
        #expect(now < 4_102_444_800_000)  // before 2100-01-01
    }

    // MARK: relative

    @Test func timesWithinTenSecondsAreJustNow() {
        #expect(ConsoleTime.relative(I.afterExamples, now: I.afterExamples) == "just now")
        #expect(ConsoleTime.relative(9_999, now: 0) == "just now")
        #expect(ConsoleTime.relative(-9_999, now: 0) == "just now")
        #expect(ConsoleTime.relative(10_000, now: 0) == "in 10 seconds")
        #expect(ConsoleTime.relative(-10_000, now: 0) == "10 seconds ago")
    }

    @Test func futureTimesSayInAndPastTimesSayAgoRoundedDown() {
        #expect(ConsoleTime.relative(29 * I.day + 12 * I.hour, now: 0) == "in 29 days")
        #expect(ConsoleTime.relative(-3 * I.hour, now: 0) == "3 hours ago")
        #expect(ConsoleTime.relative(-(3 * I.hour + 59 * I.minute), now: 0) == "3 hours ago")
        #expect(ConsoleTime.relative(5 * I.minute + 30 * I.second, now: 0) == "in 5 minutes")
    }

    @Test func oneOfAUnitIsSingular() {
        #expect(ConsoleTime.relative(I.day, now: 0) == "in 1 day")
        #expect(ConsoleTime.relative(-I.day, now: 0) == "1 day ago")
        #expect(ConsoleTime.relative(I.hour, now: 0) == "in 1 hour")
        #expect(ConsoleTime.relative(-(I.minute + I.second), now: 0) == "1 minute ago")
    }

    @Test func serverTimesReadRelativeToNow() throws {
        let expiry = try #require(ProtocolTime.milliseconds("2026-12-22T00:31:45.833Z"))
        #expect(ConsoleTime.relative(expiry, now: I.afterExamples) == "in 29 days")
        let created = try #require(ProtocolTime.milliseconds("2026-11-22T00:31:45.833Z"))
        #expect(ConsoleTime.relative(created, now: I.afterExamples) == "11 hours ago")
    }

    @Test func fromSixtyDaysTimesAreInMonthsAndFromTwoYearsInYears() {
        #expect(ConsoleTime.relative(60 * I.day, now: 0) == "in 2 months")
        #expect(ConsoleTime.relative(400 * I.day, now: 0) == "in 13 months")
        #expect(ConsoleTime.relative(-729 * I.day, now: 0) == "24 months ago")
        #expect(ConsoleTime.relative(730 * I.day, now: 0) == "in 2 years")
        #expect(ConsoleTime.relative(-(3 * 365 + 100) * I.day, now: 0) == "3 years ago")
    }

    @Test func belowSixtyDaysTimesAreInDays() {
        // ConsoleTime.relative: "Days up to 60 read better than "2 months"". Up to 29 days they are:
        #expect(ConsoleTime.relative(29 * I.day, now: 0) == "in 29 days")
        // From 30 days the month unit (30 days) is picked before the day unit.
        #expect(ConsoleTime.relative(30 * I.day, now: 0) == "in 30 days")
        #expect(ConsoleTime.relative(45 * I.day, now: 0) == "in 45 days")
        #expect(ConsoleTime.relative(-59 * I.day, now: 0) == "59 days ago")
    }
}
