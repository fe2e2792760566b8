import EntitledClient
import EntitledConsole
import Testing

/// What the console says when the server refuses its token, or wants one it was not given.
@Suite struct AuthenticationAdviceTests {
    /// The server's answer to an `auth` with an unknown token, as `entitled --auth` sends it.
    static let unknownToken =
        #"{"ok":false,"error":{"code":"unauthorized","message":"unknown token; this connection may now run only ping, hello and auth"}}"#
    /// The server's answer to a check on a connection that has not authenticated.
    static let notAuthenticated =
        #"{"ok":false,"error":{"code":"unauthorized","message":"check needs authentication: send {\"op\":\"auth\",\"token\":\"...\"} first; until then only ping, hello, auth are answered"}}"#
    static let forbidden =
        #"{"ok":false,"error":{"code":"forbidden","message":"this connection's role may not run grant; it may run ping, check"}}"#

    func refusal(_ line: String) throws -> EntitledClientError {
        .authenticationFailed(address: .tcp(host: "127.0.0.1", port: 7117), failure: try #require(try response(line).error))
    }

    @Test func aRefusedTokenNamesWhereItCameFromAndOnlyTheServersReason() throws {
        let error = try refusal(Self.unknownToken)
        #expect(
            AuthenticationAdvice.message(for: error, tokenOrigin: .environment)
                == "127.0.0.1:7117 refused the token from ENTITLED_TOKEN (unauthorized: unknown token)"
        )
        #expect(
            AuthenticationAdvice.message(for: error, tokenOrigin: .file(path: "/etc/entitled/token"))
                == "127.0.0.1:7117 refused the token from the token file /etc/entitled/token (unauthorized: unknown token)"
        )
        #expect(
            AuthenticationAdvice.message(for: error, tokenOrigin: .option)
                == "127.0.0.1:7117 refused the token from --token (unauthorized: unknown token)"
        )
    }

    @Test func otherClientErrorsKeepTheirOwnMessage() {
        let error = EntitledClientError.cannotConnect(address: .standard, reason: "connection refused")
        #expect(AuthenticationAdvice.message(for: error, tokenOrigin: .option) == error.message)
    }

    @Test func anUnauthorizedAnswerWithoutATokenSaysHowToGiveOne() throws {
        let failure = try #require(try response(Self.notAuthenticated).error)
        let hint = try #require(AuthenticationAdvice.hint(for: failure, tokenOrigin: nil))
        #expect(hint.contains("--token-file FILE"))
        #expect(hint.contains("ENTITLED_TOKEN"))
    }

    @Test func noHintWhenATokenWasGivenOrTheRefusalIsAboutTheRole() throws {
        let unauthorized = try #require(try response(Self.notAuthenticated).error)
        #expect(AuthenticationAdvice.hint(for: unauthorized, tokenOrigin: .environment) == nil)
        let forbidden = try #require(try response(Self.forbidden).error)
        #expect(AuthenticationAdvice.hint(for: forbidden, tokenOrigin: nil) == nil)
    }
}
