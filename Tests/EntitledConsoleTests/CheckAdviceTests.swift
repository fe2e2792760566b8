import EntitledClient
import EntitledConsole
import Testing

/// `check user:bob pro` where `pro` is an entitlement: the console says so and shows the right spelling.
@Suite struct CheckAdviceTests {
    func check(_ line: String) throws -> EntitledRequest {
        guard case .request(_, let request)? = try CommandParser.parse(line: line) else {
            Issue.record("\(line) is not a request")
            return .ping
        }
        return request
    }

    func knowingTheCatalog() throws -> SessionKnowledge {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try response(ProtocolLines.catalog))
        return knowledge
    }

    @Test func anEntitlementCheckedAsAProductIsNamedWithTheRightSpelling() throws {
        let error = try #require(CheckAdvice.misuse(of: try check("check user:bob pro"), knowledge: try knowingTheCatalog()))
        #expect(error.message == "pro is an entitlement, not a product: check user:bob entitlement:pro")
    }

    @Test func theRightSpellingKeepsBothSubjectsAndTheTime() throws {
        let error = try #require(CheckAdvice.misuse(of: try check("check device:d1 user:bob beta at=2027-01-01"), knowledge: try knowingTheCatalog()))
        #expect(error.message == "beta is an entitlement, not a product: check user:bob device:d1 entitlement:beta at=2027-01-01T00:00:00Z")
    }

    @Test func productsEntitlementChecksAndUnknownNamesPass() throws {
        let knowledge = try knowingTheCatalog()
        #expect(CheckAdvice.misuse(of: try check("check user:bob prod_pro_monthly"), knowledge: knowledge) == nil)
        #expect(CheckAdvice.misuse(of: try check("check user:bob entitlement:pro"), knowledge: knowledge) == nil)
        #expect(CheckAdvice.misuse(of: try check("check user:bob gold"), knowledge: knowledge) == nil)
        #expect(CheckAdvice.misuse(of: try check("check user:bob"), knowledge: knowledge) == nil)
        #expect(CheckAdvice.misuse(of: try check("check user:bob pro"), knowledge: SessionKnowledge()) == nil)
    }

    @Test func aNameThatIsAlsoAProductIsLeftAlone() throws {
        var knowledge = try knowingTheCatalog()
        knowledge.learn(from: try response(#"{"ok":true,"entitlement":"plus","products":["pro"]}"#))
        #expect(CheckAdvice.misuse(of: try check("check user:bob pro"), knowledge: knowledge) == nil)
    }

    @Test func knowledgeForgetsWhatUndefineAndEraseRemoved() throws {
        var knowledge = try knowingTheCatalog()
        knowledge.learn(from: try response(ProtocolLines.memberships))
        #expect(knowledge.knowsCatalog)
        knowledge.forget(entitlement: "pro")
        #expect(knowledge.entitlements == ["beta"])
        knowledge.forget(user: "user_42", device: nil)
        #expect(knowledge.users.isEmpty)
        #expect(knowledge.membershipIDs.isEmpty)
        #expect(knowledge.membershipOwners.isEmpty)
    }
}

/// A check the server already answered "not active" keeps that answer in the advice.
@Suite struct CheckAdviceAfterAnswerTests {
    @Test func theAdviceAfterAnInactiveAnswerStartsWithTheAnswer() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try response(ProtocolLines.catalog))
        guard case .request(_, let request)? = try CommandParser.parse(line: "check user:bob pro") else {
            Issue.record("check user:bob pro is not a request")
            return
        }
        #expect(
            CheckAdvice.inactiveAnswerAdvice(for: request, knowledge: knowledge)
                == "not active: pro is an entitlement, not a product; to check the entitlement: check user:bob entitlement:pro"
        )
        #expect(CheckAdvice.inactiveAnswerAdvice(for: request, knowledge: SessionKnowledge()) == nil)
    }
}
