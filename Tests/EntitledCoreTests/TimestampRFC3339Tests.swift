import Testing

@testable import EntitledCore

@Suite struct TimestampRFC3339Tests {
    @Test func formattedTimesParseBackToTheSameText() throws {
        for text in [
            "2026-12-21T00:00:00Z", "2026-12-21T01:30:00.250Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999Z",
            "2000-02-29T12:34:56.001Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z",
        ] {
            let parsed = try #require(Timestamp(rfc3339: text), "\(text)")
            #expect(parsed.rfc3339 == text)
        }
    }

    @Test func timestampsRoundTripThroughTheirText() throws {
        for milliseconds: Int64 in [0, 1, -1, 1_797_811_200_000, 1_780_315_200_123, -2_208_988_800_000, 951_782_400_000] {
            let timestamp = Timestamp(millisecondsSinceEpoch: milliseconds)
            #expect(Timestamp(rfc3339: timestamp.rfc3339) == timestamp)
        }
    }

    @Test func parsingAUTCTimeGivesMillisecondsSinceTheEpoch() throws {
        #expect(Timestamp(rfc3339: "1970-01-01T00:00:00Z")?.millisecondsSinceEpoch == 0)
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00Z")?.millisecondsSinceEpoch == 1_797_811_200_000)
    }

    @Test func aPositiveOffsetIsSubtractedToGetUTC() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T01:30:00+01:30") == Timestamp(rfc3339: "2026-12-21T00:00:00Z"))
    }

    @Test func aNegativeOffsetIsAddedToGetUTC() throws {
        #expect(Timestamp(rfc3339: "2026-12-20T19:00:00-05:00") == Timestamp(rfc3339: "2026-12-21T00:00:00Z"))
        #expect(Timestamp(rfc3339: "2026-12-20T19:00:00-05:00")?.rfc3339 == "2026-12-21T00:00:00Z")
    }

    @Test func aOneDigitFractionIsTenthsOfASecond() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00.5Z")?.millisecondsSinceEpoch == 1_797_811_200_500)
    }

    @Test func fractionDigitsBeyondMillisecondsAreTruncated() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00.123456Z")?.millisecondsSinceEpoch == 1_797_811_200_123)
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00.9999Z")?.millisecondsSinceEpoch == 1_797_811_200_999)
    }

    @Test func lowercaseTAndZAreAccepted() throws {
        #expect(Timestamp(rfc3339: "2026-12-21t00:00:00z") == Timestamp(rfc3339: "2026-12-21T00:00:00Z"))
    }

    @Test func aSpaceMaySeparateDateAndTime() throws {
        #expect(Timestamp(rfc3339: "2026-12-21 00:00:00Z") == Timestamp(rfc3339: "2026-12-21T00:00:00Z"))
    }

    @Test func februaryThirtiethIsRejected() throws {
        #expect(Timestamp(rfc3339: "2026-02-30T00:00:00Z") == nil)
    }

    @Test func februaryTwentyNinthIsRejectedOutsideALeapYearAndAcceptedIn2028() throws {
        #expect(Timestamp(rfc3339: "2027-02-29T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2028-02-29T00:00:00Z")?.millisecondsSinceEpoch == 1_835_395_200_000)
        #expect(Timestamp(rfc3339: "1900-02-29T00:00:00Z") == nil)  // divisible by 100, not by 400
        #expect(Timestamp(rfc3339: "2000-02-29T00:00:00Z") != nil)  // divisible by 400
    }

    @Test func monthThirteenIsRejected() throws {
        #expect(Timestamp(rfc3339: "2026-13-01T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-00-01T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-04-31T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-01-00T00:00:00Z") == nil)
    }

    @Test func hourTwentyFourIsRejected() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T24:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21T23:60:00Z") == nil)
    }

    @Test func aTimeWithoutAZoneIsRejected() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00.250") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21") == nil)
    }

    @Test func trailingGarbageIsRejected() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00Zx") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00Z ") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00+01:00:00") == nil)
    }

    @Test func anEmptyStringIsRejected() throws {
        #expect(Timestamp(rfc3339: "") == nil)
    }

    @Test func otherMalformedTimesAreRejected() throws {
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00.Z") == nil)  // a point without digits
        #expect(Timestamp(rfc3339: "2026-12-21T00:00:00+0100") == nil)  // offset without a colon
        #expect(Timestamp(rfc3339: "26-12-21T00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "2026-12-21X00:00:00Z") == nil)
        #expect(Timestamp(rfc3339: "２026-12-21T00:00:00Z") == nil)  // a full-width digit
    }

    @Test func formattingOmitsZeroMilliseconds() throws {
        #expect(Timestamp(millisecondsSinceEpoch: 1_797_811_200_000).rfc3339 == "2026-12-21T00:00:00Z")
    }

    @Test func formattingWritesNonZeroMillisecondsAsThreeDigits() throws {
        #expect(Timestamp(millisecondsSinceEpoch: 1_797_811_200_250).rfc3339 == "2026-12-21T00:00:00.250Z")
        #expect(Timestamp(millisecondsSinceEpoch: 1_797_811_200_007).rfc3339 == "2026-12-21T00:00:00.007Z")
    }

    @Test func datesBefore1970AreFormattedCorrectly() throws {
        #expect(Timestamp(millisecondsSinceEpoch: -1).rfc3339 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(secondsSinceEpoch: -86_400).rfc3339 == "1969-12-31T00:00:00Z")
        #expect(Timestamp(millisecondsSinceEpoch: -2_208_988_800_000).rfc3339 == "1900-01-01T00:00:00Z")
        #expect(Timestamp(rfc3339: "1900-01-01T00:00:00Z")?.millisecondsSinceEpoch == -2_208_988_800_000)
    }

    @Test func formattingClampsTimesOutsideFourDigitYears() throws {
        #expect(Timestamp(millisecondsSinceEpoch: .max).rfc3339 == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp(millisecondsSinceEpoch: .min).rfc3339 == "0000-01-01T00:00:00Z")
    }
}
