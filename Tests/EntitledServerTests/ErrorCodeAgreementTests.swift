import EntitledClient
import EntitledWire
import Testing

@testable import EntitledServer

/// The Swift client and the server know the same error codes by the same names, both ways: a code the
/// server writes that the client does not know would reach applications as `unknown`, and a code the
/// client knows that the server never writes is one that applications handle in vain.
@Suite struct ErrorCodeAgreementTests {
    @Test func everyCodeTheServerWritesIsAKnownCodeOfTheClient() {
        for code in ErrorCode.allCases {
            let known = ServerErrorCode(rawValue: code.rawValue)
            #expect(known != .unknown(code.rawValue), "the client does not know \(code.rawValue)")
        }
    }

    @Test func everyCodeTheClientKnowsIsACodeTheServerWrites() throws {
        // `tls_required` is written before any request is read, as a line of its own (and not counted in
        // `stats`), so it is no `ErrorCode`.
        let tlsLine = try EntitledResponse(line: String(decoding: ServedConnection.tlsRequiredLine.dropLast(), as: UTF8.self))
        let tlsCode = try #require(tlsLine.error?.code)
        let written = Set(ErrorCode.allCases.map(\.rawValue) + [tlsCode.rawValue])
        for code in ServerErrorCode.known {
            #expect(written.contains(code.rawValue), "the server never writes \(code.rawValue)")
        }
        #expect(ServerErrorCode.known.count == written.count)
    }
}
