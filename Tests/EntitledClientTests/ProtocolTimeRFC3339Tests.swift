import EntitledClient
import Testing

/// `ProtocolTime.rfc3339Milliseconds(_:)`: the stores' times (Google Play writes nanoseconds, Whop offsets),
/// read as RFC 3339 section 5.6 defines them, and nothing else.
@Suite struct ProtocolTimeRFC3339Tests {
    static let noon: Int64 = 1_764_849_600_000  // 2025-12-04T12:00:00Z

    @Test(arguments: [
        ("2025-12-04T12:00:00Z", noon), ("2025-12-04t12:00:00z", noon), ("2025-12-04T12:00:00.5Z", noon + 500),
        ("2025-12-04T12:00:00.123Z", noon + 123), ("2025-12-04T12:00:00.123456789Z", noon + 123),
        ("2025-12-04T13:30:00+01:30", noon), ("2025-12-04T07:00:00.250-05:00", noon + 250),
    ])
    func readsEveryFormTheStoresWrite(text: String, expected: Int64) {
        #expect(ProtocolTime.rfc3339Milliseconds(text) == expected)
    }

    @Test(arguments: [
        "", "2025-12-04", "2025-12-04T12:00:00", "2025-12-04 12:00:00Z", "2025-13-04T12:00:00Z", "2025-12-32T12:00:00Z",
        "2025-12-04T24:00:00Z", "2025-12-04T12:60:00Z", "2025-12-04T12:00:00.Z", "2025-12-04T12:00:00+0100",
        "2025-12-04T12:00:00+01:00 ", "2025-12-04T12:00:00ZZ", "2025-12-04T12:00:00." + String(repeating: "9", count: 60) + "Z",
    ])
    func refusesWhatIsNotRFC3339(text: String) {
        #expect(ProtocolTime.rfc3339Milliseconds(text) == nil)
    }

    @Test func agreesWithTheProtocolsOwnReader() {
        for text in ["1970-01-01T00:00:00Z", "2026-11-26T12:00:00.123Z", "9999-12-31T23:59:59.999Z"] {
            #expect(ProtocolTime.rfc3339Milliseconds(text) == ProtocolTime.milliseconds(text))
        }
    }
}
