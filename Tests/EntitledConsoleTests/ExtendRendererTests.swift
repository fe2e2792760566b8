import EntitledClient
import Testing

@testable import EntitledConsole

/// Real lines of the server about an `extend` (an answer, a history page and a push; times moved to the
/// protocol examples' day): what the extension gave is shown with both expiries, the one before and the
/// one after.
extension ProtocolLines {
    static let extended =
        #"{"ok":true,"seq":13,"membership":{"id":"mem_fkg2n5hrnmp5p","productId":"prod_pro_monthly","user":"alice","status":"active","isActive":true,"createdAt":"2026-11-22T07:18:28.508Z","expiresAt":"2027-01-22T07:18:28.508Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"},"previousExpiresAt":"2026-12-22T07:18:28.508Z"}"#
    static let historyWithExtension =
        #"{"ok":true,"history":[{"time":"2026-11-22T07:18:30.475Z","actor":"local","action":"extend","reason":"outage on 2026-11-20","sequence":13,"previousExpiresAt":"2026-12-22T07:18:28.508Z","membership":{"id":"mem_fkg2n5hrnmp5p","productId":"prod_pro_monthly","user":"alice","status":"active","isActive":true,"createdAt":"2026-11-22T07:18:28.508Z","expiresAt":"2027-01-22T07:18:28.508Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}},{"time":"2026-11-22T07:18:28.508Z","actor":"local","action":"grant","membership":{"id":"mem_fkg2n5hrnmp5p","productId":"prod_pro_monthly","user":"alice","status":"active","isActive":true,"createdAt":"2026-11-22T07:18:28.508Z","expiresAt":"2026-12-22T07:18:28.508Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}]}"#
    static let pushExtend =
        #"{"push":"access","cause":"extend","sequence":13,"membership":{"id":"mem_fkg2n5hrnmp5p","productId":"prod_pro_monthly","user":"alice","status":"active","isActive":true,"createdAt":"2026-11-22T07:18:28.508Z","expiresAt":"2027-01-22T07:18:28.508Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
}

/// How an extension reads: the answer to `extend`, an `extend` entry of the history, a pushed `extend`.
/// Plain style, at 2026-11-22T12:00:00Z.
@Suite struct ExtendRendererTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    func render(_ command: ConsoleCommand, _ line: String) throws -> String {
        renderer.render(command: command, response: try response(line))
    }

    @Test func anExtensionShowsTheMembershipThenWhereItsExpiryMovedFromAndTo() throws {
        #expect(
            try render(.extend, ProtocolLines.extended) == """
                ID                 PRODUCT           STATUS  ACTIVE  EXPIRES                                 RENEWS  SOURCE     OWNER
                mem_fkg2n5hrnmp5p  prod_pro_monthly  active  yes     2027-01-22T07:18:28.508Z (in 2 months)  no      app_store  user:alice
                expiry moved from 2026-12-22T07:18:28.508Z (in 29 days) to 2027-01-22T07:18:28.508Z (in 2 months)
                """
        )
    }

    @Test func anExtensionOfAnExpiredMembershipSaysItsExpiryWasPast() throws {
        let line = ProtocolLines.extended
            .replacing(#""previousExpiresAt":"2026-12-22T07:18:28.508Z""#, with: #""previousExpiresAt":"2026-11-20T12:00:00Z""#)
            .replacing(#""expiresAt":"2027-01-22T07:18:28.508Z""#, with: #""expiresAt":"2026-11-29T12:00:00Z""#)
        #expect(
            try render(.extend, line).split(separator: "\n").last
                == "expiry moved from 2026-11-20T12:00:00Z (2 days ago) to 2026-11-29T12:00:00Z (in 7 days)"
        )
    }

    @Test func theTimesOfTheMoveHaveTheirHintsDimmedLikeEveryTime() throws {
        let colored = ResponseRenderer(style: TextStyle(usesColor: true), now: Instants.afterExamples)
        let text = colored.render(command: .extend, response: try response(ProtocolLines.extended))
        #expect(
            text.split(separator: "\n").last
                == "expiry moved from 2026-12-22T07:18:28.508Z \u{1B}[2m(in 29 days)\u{1B}[0m to 2027-01-22T07:18:28.508Z \u{1B}[2m(in 2 months)\u{1B}[0m"
        )
    }

    @Test func anAnswerWithoutThePreviousExpiryIsTheMembershipAlone() throws {
        let line = ProtocolLines.extended.replacing(#","previousExpiresAt":"2026-12-22T07:18:28.508Z""#, with: "")
        #expect(try render(.extend, line) == (try render(.grant, line)))
        #expect(try render(.extend, #"{"ok":true,"seq":3}"#) == #"{"ok":true,"seq":3}"#)
    }

    @Test func aHistoryPageWithAnExtensionHasAnExpiryColumnThatOnlyItsRowFills() throws {
        let text = try render(.history, ProtocolLines.historyWithExtension)
        #expect(
            text == """
                TIME                                    ACTOR  ACTION  MEMBERSHIP         PRODUCT           REASON                EXPIRY
                2026-11-22T07:18:30.475Z (4 hours ago)  local  extend  mem_fkg2n5hrnmp5p  prod_pro_monthly  outage on 2026-11-20  moved from 2026-12-22T07:18:28.508Z (in 29 days) to 2027-01-22T07:18:28.508Z (in 2 months)
                2026-11-22T07:18:28.508Z (4 hours ago)  local  grant   mem_fkg2n5hrnmp5p  prod_pro_monthly  -
                """
        )
        #expect(!text.split(separator: "\n").contains { $0.hasSuffix(" ") })
    }

    @Test func aHistoryPageWithoutAnExtensionHasNoExpiryColumn() throws {
        #expect(try render(.history, ProtocolLines.history).split(separator: "\n").first?.hasSuffix("  REASON") == true)
    }

    @Test func aPushedExtensionNamesItsCauseAndTheNewEndOfAccess() throws {
        let push = try #require(EntitledPush(pushedLine: ProtocolLines.pushExtend))
        #expect(
            renderer.push(push)
                == "push extend: mem_fkg2n5hrnmp5p prod_pro_monthly active, access until 2027-01-22T07:18:28.508Z (in 2 months), user:alice"
        )
    }
}
