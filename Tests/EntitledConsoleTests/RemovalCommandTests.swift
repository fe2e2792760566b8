import EntitledConsole
import Testing

/// `undefine` (an entitlement out of the catalog) and `erase` (a person, for good): their syntax, their
/// requests and how their answers read. `define` without products is refused, pointing at `undefine`.
@Suite struct RemovalCommandTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    @Test func undefineSendsTheEntitlementAndTheReason() throws {
        #expect(try sentRequest("undefine pro") == SentRequest(command: .undefine, line: #"{"op":"undefine","entitlement":"pro"}"#))
        #expect(
            try sentRequest(#"undefine pro reason="replaced by premium""#)?.line
                == #"{"op":"undefine","entitlement":"pro","reason":"replaced by premium"}"#
        )
    }

    @Test func undefineNeedsOneEntitlementAndNothingElse() throws {
        #expect(usageError("undefine") == .badArguments(try spec("undefine"), reason: "an ENTITLEMENT name is required (catalog lists them)"))
        #expect(usageError("undefine pro basic") == .badArguments(try spec("undefine"), reason: "unexpected 'basic'"))
    }

    @Test func eraseSendsTheSubjectAndTheReason() throws {
        #expect(try sentRequest("erase user:bob") == SentRequest(command: .erase, line: #"{"op":"erase","user":"bob"}"#))
        #expect(
            try sentRequest(#"erase device:d1 user:bob reason="gdpr 118""#)?.line
                == #"{"op":"erase","user":"bob","device":"d1","reason":"gdpr 118"}"#
        )
        #expect(usageError("erase") == .badArguments(try spec("erase"), reason: "a SUBJECT is required: user:ID, device:ID or both"))
        #expect(usageError("erase bob") == .badArguments(try spec("erase"), reason: "a SUBJECT is required: user:ID, device:ID or both"))
    }

    @Test func defineWithoutProductsIsRefusedPointingAtUndefine() throws {
        #expect(
            usageError("define pro")
                == .badArguments(try spec("define"), reason: "at least one PRODUCT is required; to remove pro from the catalog: undefine pro")
        )
    }

    @Test func theThreeCommandsThatTakeThingsAwayNeedConfirmationAndNoOtherDoes() {
        #expect(CommandSpec.all.filter(\.needsConfirmation).map(\.name) == ["revoke", "undefine", "erase"])
    }

    @Test func undefinesAnswerNamesTheProductsTheEntitlementHad() throws {
        let answer = try response(#"{"ok":true,"entitlement":"pro","products":["p1","p2"]}"#)
        #expect(renderer.render(command: .undefine, response: answer) == "pro removed from the catalog (it was unlocked by p1, p2)")
    }

    @Test func erasesAnswerCountsWhatWent() throws {
        let many = try response(#"{"ok":true,"erased":{"memberships":2,"historyEntries":5}}"#)
        #expect(renderer.render(command: .erase, response: many) == "erased 2 memberships and 5 history entries")
        let one = try response(#"{"ok":true,"erased":{"memberships":1,"historyEntries":1}}"#)
        #expect(renderer.render(command: .erase, response: one) == "erased 1 membership and 1 history entry")
    }

    @Test func completionOffersEntitlementsAfterUndefineAndSubjectsAfterErase() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try response(ProtocolLines.catalog))
        knowledge.learn(from: try response(ProtocolLines.memberships))
        #expect(Completer.candidates(forLine: "undefine ", knowledge: knowledge).candidates == ["beta", "pro"])
        #expect(Completer.candidates(forLine: "erase user:u", knowledge: knowledge).candidates == ["user:user_42"])
    }
}
