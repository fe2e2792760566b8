import EntitledClient
import EntitledWire
import Testing

/// The Swift client knows every error code the server writes, by the same name.
@Suite struct ErrorCodeAgreementTests {
    @Test func everyCodeTheServerWritesIsAKnownCodeOfTheClient() {
        for code in ErrorCode.allCases {
            let known = ServerErrorCode(rawValue: code.rawValue)
            #expect(known != .unknown(code.rawValue), "the client does not know \(code.rawValue)")
        }
    }
}
