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

/// An erasure names the person it removes, and after it the history forgets every line naming them.
@Suite struct HistoryPolicyErasureTests {
    @Test func anEraseCommandIsNotRecordedInAnyCase() {
        #expect(!HistoryPolicy.shouldRecord("erase user:alice"))
        #expect(!HistoryPolicy.shouldRecord("  ERASE device:d1 reason=\"request 118\""))
        #expect(!HistoryPolicy.shouldRecord("Erase"))
    }

    @Test func aRawEraseRequestIsNotRecordedHoweverItIsSpaced() {
        #expect(!HistoryPolicy.shouldRecord(#"raw {"op":"erase","user":"alice"}"#))
        #expect(!HistoryPolicy.shouldRecord(#"raw {"user":"alice", "op" : "erase"}"#))
        #expect(!HistoryPolicy.shouldRecord(#"RAW {"op":"ERASE","device":"d1"}"#))
    }

    @Test func linesThatOnlyMentionErasureAreStillRecorded() {
        #expect(HistoryPolicy.shouldRecord("help erase"))
        #expect(HistoryPolicy.shouldRecord("history erasures"))
        #expect(HistoryPolicy.shouldRecord(#"raw {"op":"history","erasures":true}"#))
    }

    @Test func aLineNamesAnErasedIdWhereverItAppears() {
        let ids = ["alice", "d1"]
        #expect(HistoryPolicy.line("grant user:alice prod_pro 30d", names: ids))
        #expect(HistoryPolicy.line("show device:d1", names: ids))
        #expect(HistoryPolicy.line(#"raw {"op":"customer","user":"alice"}"#, names: ids))
        // Ids are opaque: inside a longer word it may still be the person, and is forgotten too.
        #expect(HistoryPolicy.line("check user:alice2", names: ids))
    }

    @Test func aLineNamesAnErasedIdJSONEscapedInARawRequest() {
        #expect(HistoryPolicy.line(#"raw {"op":"show","user":"a\"b"}"#, names: [#"a"b"#]))
        #expect(HistoryPolicy.line(#"show user:'a"b'"#, names: [#"a"b"#]))
    }

    @Test func linesNamingOthersAreKept() {
        #expect(!HistoryPolicy.line("grant user:bob prod_pro", names: ["alice"]))
        #expect(!HistoryPolicy.line("ping", names: ["alice", "d1"]))
        #expect(!HistoryPolicy.line("check user:Alice", names: ["alice"]))  // identifiers are case-sensitive
        #expect(!HistoryPolicy.line("ping", names: [""]))
    }
}
