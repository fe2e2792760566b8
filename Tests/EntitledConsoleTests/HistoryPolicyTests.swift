import EntitledConsole
import Testing

/// Which lines go to the history file, which outlives the session: never one that carries a token.
@Suite struct HistoryPolicyTests {
    @Test func ordinaryCommandsAreRecorded() {
        #expect(HistoryPolicy.shouldRecord("grant device:d1 prod_pro 30d source=app_store"))
        #expect(HistoryPolicy.shouldRecord("check user:authority"))
        #expect(HistoryPolicy.shouldRecord(#"raw {"op":"check","user":"u1"}"#))
        #expect(HistoryPolicy.shouldRecord("  show user:u1"))
    }

    @Test func blankLinesAreNotRecorded() {
        #expect(!HistoryPolicy.shouldRecord(""))
        #expect(!HistoryPolicy.shouldRecord("   "))
        #expect(!HistoryPolicy.shouldRecord("\t \t"))
    }

    @Test func anAuthCommandIsNotRecordedInAnyCase() {
        #expect(!HistoryPolicy.shouldRecord("auth s3cret"))
        #expect(!HistoryPolicy.shouldRecord("  AUTH s3cret"))
        #expect(!HistoryPolicy.shouldRecord("Auth"))
    }

    @Test func aRawAuthRequestIsNotRecorded() {
        #expect(!HistoryPolicy.shouldRecord(#"raw {"op":"auth","secret":"x"}"#))
        #expect(!HistoryPolicy.shouldRecord(#"raw {"op":"AUTH"}"#))
    }

    @Test func aLineMentioningATokenIsNotRecorded() {
        #expect(!HistoryPolicy.shouldRecord(#"raw {"op":"check","token":"abc","user":"u1"}"#))
        #expect(!HistoryPolicy.shouldRecord("check user:u1 TOKEN=abc"))
    }
}

/// The console's own token is kept out of the history wherever it appears in a line.
@Suite struct HistoryPolicySessionTokenTests {
    let token = "Kx7-admin-0123456789abcdef"

    @Test func aLineHoldingTheSessionTokenIsNotRecorded() {
        #expect(!HistoryPolicy.shouldRecord(token, token: token))
        #expect(!HistoryPolicy.shouldRecord("  \(token)  ", token: token))
        #expect(!HistoryPolicy.shouldRecord("check user:\(token)", token: token))
    }

    @Test func otherLinesAreStillRecordedWhenATokenIsKnown() {
        #expect(HistoryPolicy.shouldRecord("check user:u1", token: token))
        // Only the whole token counts: a common fragment of it is not a secret.
        #expect(HistoryPolicy.shouldRecord("grant user:admin prod_x", token: token))
    }

    @Test func anEmptyTokenKeepsNothingOut() {
        #expect(HistoryPolicy.shouldRecord("check user:u1", token: ""))
    }
}
