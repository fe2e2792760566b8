import EntitledConsole
import Testing

/// What Tab offers for the word under the cursor: command names, subjects, options, and the products,
/// entitlements and memberships the session has seen.
@Suite struct CompleterTests {
    /// What a session knows after a catalog and a few memberships.
    static let knowledge: SessionKnowledge = {
        var knowledge = SessionKnowledge()
        knowledge.entitlements = ["pro", "beta"]
        knowledge.products = ["prod_pro_monthly", "prod_pro_yearly"]
        knowledge.membershipIDs = ["mem_1ymr6jcw5jqzv", "mem_bydn4qrrzzhrt"]
        knowledge.users = ["user_42"]
        knowledge.devices = ["dev_A", "dev_B"]
        return knowledge
    }()

    func complete(_ line: String, knowing knowledge: SessionKnowledge = knowledge) -> Completion {
        Completer.candidates(forLine: line, knowledge: knowledge)
    }

    // MARK: command names

    @Test func aCommandNameIsCompletedWithoutRegardToCaseAndGetsASpace() {
        let completion = complete("GR")
        #expect(completion.partial == "GR")
        #expect(completion.candidates == ["grant"])
        #expect(completion.action == .replace(deleting: 2, insert: "grant "))
    }

    @Test func commandNamesSharingOnlyTheTypedLetterAreListed() {
        #expect(complete("s").action == .list(["show", "snapshot", "stats"]))
        #expect(complete("sn").action == .replace(deleting: 2, insert: "snapshot "))
    }

    @Test func theCommandNamesStartingWithTheTypedLettersAreOffered() {
        #expect(Set(complete("c").candidates) == ["check", "claim", "catalog", "changes", "customer"])
        #expect(complete("h").action == .list(["help", "history"]))
        #expect(complete("hi").action == .replace(deleting: 2, insert: "history "))
        #expect(complete("e").action == .list(["erase", "event", "exit", "export", "extend"]))
        #expect(complete("ext").action == .replace(deleting: 3, insert: "extend "))
        #expect(complete("w").action == .list(["watch", "webhooks"]))
        #expect(complete("wa").action == .replace(deleting: 2, insert: "watch "))
        #expect(complete("u").action == .replace(deleting: 1, insert: "un"))
        #expect(complete("und").action == .replace(deleting: 3, insert: "undefine "))
        #expect(Set(complete("").candidates) == Set(CommandSpec.all.map(\.name)))
    }

    @Test func commandNameCandidatesAreSortedLikeEveryOtherCandidateList() {
        #expect(complete("c").candidates == ["catalog", "changes", "check", "claim", "customer"])
        #expect(complete("c").action == .list(["catalog", "changes", "check", "claim", "customer"]))
        #expect(complete("r").action == .list(["raw", "reload", "revoke"]))
    }

    @Test func anUnknownCommandOrAnUnknownPrefixCompletesNothing() {
        #expect(complete("frob ").action == .none)
        #expect(complete("frob u").candidates == [])
        #expect(complete("zz").action == .none)
    }

    // MARK: subjects

    @Test func aSubjectPrefixIsCompletedWithoutATrailingSpace() {
        #expect(complete("grant u", knowing: SessionKnowledge()).action == .replace(deleting: 1, insert: "user:"))
        #expect(complete("show d", knowing: SessionKnowledge()).action == .replace(deleting: 1, insert: "device:"))
        #expect(complete("check U", knowing: SessionKnowledge()).action == .replace(deleting: 1, insert: "user:"))
    }

    @Test func knownUsersAndDevicesAreOfferedAfterTheirPrefix() {
        #expect(complete("check user:").action == .replace(deleting: 5, insert: "user:user_42 "))
        let devices = complete("check device:")
        #expect(devices.candidates == ["device:dev_A", "device:dev_B"])
        #expect(devices.action == .replace(deleting: 7, insert: "device:dev_"))
    }

    @Test func aSubjectAlreadyGivenIsNotOfferedAgain() {
        #expect(complete("show user:user_42 u").action == .none)
        #expect(complete("claim device:dev_A u", knowing: SessionKnowledge()).action == .replace(deleting: 1, insert: "user:"))
        #expect(complete("claim device:dev_A user:user_42 ").action == .replace(deleting: 0, insert: "reason="))
        #expect(complete("claim device:dev_A user:user_42 u").action == .none)
    }

    @Test func thePrefixTypedInCapitalsIsNotOfferedBackBesideTheKnownUsers() {
        // "user:" typed in full is dropped from the candidates so the known users are offered; the match is
        // case-insensitive, so "USER:" should be dropped the same way.
        #expect(complete("check USER:").action == .replace(deleting: 5, insert: "user:user_42 "))
    }

    // MARK: products, entitlements, options

    @Test func productsSharingAPrefixAreCompletedToTheCommonPrefix() {
        let completion = complete("grant user:u1 pr")
        #expect(completion.candidates == ["prod_pro_monthly", "prod_pro_yearly"])
        #expect(completion.action == .replace(deleting: 2, insert: "prod_pro_"))
        #expect(complete("grant user:u1 prod_pro_y").action == .replace(deleting: 10, insert: "prod_pro_yearly "))
    }

    @Test func checkOffersEntitlementsWithTheirPrefix() {
        let completion = complete("check user:u1 e")
        #expect(completion.candidates == ["entitlement:beta", "entitlement:pro"])
        #expect(completion.action == .replace(deleting: 1, insert: "entitlement:"))
        #expect(complete("check user:u1 entitlement:p").action == .replace(deleting: 13, insert: "entitlement:pro "))
    }

    @Test func checkOffersNoSecondTarget() {
        #expect(complete("check user:u1 prod_pro_monthly pr").action == .none)
    }

    @Test func anOptionIsCompletedWithoutATrailingSpace() {
        #expect(complete("show user:u1 at").action == .replace(deleting: 2, insert: "at="))
        #expect(complete("grant user:u1 prod_pro_yearly pl").action == .replace(deleting: 2, insert: "plan="))
        #expect(complete("check user:u1 at=2027-01-01 a").action == .none)
    }

    @Test func grantSourcesAreCompletedToTheOptionThenListed() {
        #expect(complete("grant user:u1 prod_pro_yearly so").action == .replace(deleting: 2, insert: "source="))
        #expect(
            complete("grant user:u1 prod_pro_yearly source=").action
                == .list([
                    "source=app_store", "source=manual", "source=play_store", "source=promotional", "source=stripe",
                    "source=whop",
                ])
        )
        #expect(complete("grant user:u1 prod_pro_yearly source=st").action == .replace(deleting: 9, insert: "source=stripe "))
    }

    @Test func grantOffersATermAfterTheProduct() {
        #expect(complete("grant user:u1 prod_pro_yearly l").action == .replace(deleting: 1, insert: "lifetime "))
        #expect(complete("grant user:u1 prod_pro_yearly un").action == .replace(deleting: 2, insert: "until "))
        #expect(complete("grant user:u1 prod_pro_yearly 3").action == .replace(deleting: 1, insert: "30d "))
        #expect(complete("grant user:u1 prod_pro_yearly 1").action == .list(["1mo", "1y"]))
    }

    @Test func grantCompletesItsLifecycleOptionsAndTheirValues() {
        #expect(complete("grant user:u1 prod_pro_yearly r").action == .replace(deleting: 1, insert: "re"))
        #expect(complete("grant user:u1 prod_pro_yearly rene").action == .replace(deleting: 4, insert: "renews="))
        #expect(complete("grant user:u1 prod_pro_yearly renews=").action == .list(["renews=no", "renews=yes"]))
        #expect(
            complete("grant user:u1 prod_pro_yearly period=").action
                == .list(["period=intro", "period=normal", "period=promotional", "period=trial"])
        )
        #expect(complete("grant user:u1 prod_pro_yearly period=t").action == .replace(deleting: 8, insert: "period=trial "))
        #expect(complete("grant user:u1 prod_pro_yearly env=s").action == .replace(deleting: 5, insert: "env=sandbox "))
        #expect(complete("grant user:u1 prod_pro_yearly ow").action == .replace(deleting: 2, insert: "ownership="))
        #expect(complete("grant user:u1 prod_pro_yearly type=o").action == .replace(deleting: 6, insert: "type=offer_code "))
        #expect(complete("grant user:u1 prod_pro_yearly k").action == .replace(deleting: 1, insert: "key="))
        #expect(complete("grant user:u1 prod_pro_yearly tr").action == .replace(deleting: 2, insert: "transaction="))
        #expect(complete("grant user:u1 prod_pro_yearly key=a k").action == .none)
    }

    // MARK: event, customer, history, watch

    @Test func eventOffersMembershipsThenTypesThenItsOptions() {
        #expect(complete("event mem_b").action == .replace(deleting: 5, insert: "mem_bydn4qrrzzhrt "))
        #expect(complete("event mem_bydn4qrrzzhrt b").action == .replace(deleting: 1, insert: "billing_"))
        #expect(complete("event mem_bydn4qrrzzhrt billing_").action == .list(["billing_issue", "billing_recovered"]))
        #expect(complete("event mem_bydn4qrrzzhrt re").action == .list(["refund", "refund_reversal", "renewal", "resume"]))
        #expect(complete("event mem_bydn4qrrzzhrt renewal i").action == .replace(deleting: 1, insert: "id="))
        #expect(complete("event mem_bydn4qrrzzhrt renewal id=e1 u").action == .replace(deleting: 1, insert: "until "))
        #expect(complete("event mem_bydn4qrrzzhrt renewal id=e1 g").action == .replace(deleting: 1, insert: "grace="))
        #expect(
            complete("event mem_bydn4qrrzzhrt product_change id=e1 product=").action
                == .replace(deleting: 8, insert: "product=prod_pro_")
        )
        #expect(complete("event mem_bydn4qrrzzhrt renewal id=e1 until 2027-01-01 u").action == .none)
        #expect(complete("event mem_bydn4qrrzzhrt renewal id=e1 i").action == .none)
    }

    @Test func customerOffersSubjectsOnly() {
        #expect(complete("customer u").action == .replace(deleting: 1, insert: "user:"))
        #expect(complete("customer user:user_42 a").action == .none)
    }

    @Test func historyOffersSubjectsOrEntitlementsThenALimit() {
        #expect(complete("history e").action == .replace(deleting: 1, insert: "entitlement:"))
        #expect(complete("history entitlement:p").action == .replace(deleting: 13, insert: "entitlement:pro "))
        #expect(complete("history entitlement:pro u").action == .none)
        #expect(complete("history user:user_42 e").action == .none)
        #expect(complete("history user:user_42 l").action == .replace(deleting: 1, insert: "limit="))
        #expect(complete("history d").action == .replace(deleting: 1, insert: "device:"))
    }

    @Test func watchOffersSubjectsOrAll() {
        #expect(complete("watch a").action == .replace(deleting: 1, insert: "all "))
        #expect(complete("watch all ").action == .none)
        #expect(complete("watch user:user_42 a").action == .none)
        #expect(complete("unwatch d").action == .replace(deleting: 1, insert: "device:"))
    }

    // MARK: revoke, define, help

    @Test func revokeOffersKnownMembershipIdsThenReasons() {
        #expect(complete("revoke m").action == .replace(deleting: 1, insert: "mem_"))
        #expect(complete("revoke mem_b").action == .replace(deleting: 5, insert: "mem_bydn4qrrzzhrt "))
        #expect(complete("revoke mem_bydn4qrrzzhrt r").action == .replace(deleting: 1, insert: "refund "))
        #expect(complete("revoke mem_bydn4qrrzzhrt c").action == .replace(deleting: 1, insert: "chargeback "))
        #expect(complete("revoke x", knowing: SessionKnowledge()).action == .none)
    }

    @Test func extendOffersKnownMembershipIdsThenDurationsThenTheReasonOption() {
        #expect(complete("extend m").action == .replace(deleting: 1, insert: "mem_"))
        #expect(complete("extend mem_1").action == .replace(deleting: 5, insert: "mem_1ymr6jcw5jqzv "))
        #expect(complete("extend mem_1ymr6jcw5jqzv ").action == .list(["1mo", "1y", "30d", "7d", "until"]))
        #expect(complete("extend mem_1ymr6jcw5jqzv 1").action == .list(["1mo", "1y"]))
        #expect(complete("extend mem_1ymr6jcw5jqzv u").action == .replace(deleting: 1, insert: "until "))
        // After until comes a TIME, which nothing completes; after the term, the reason.
        #expect(complete("extend mem_1ymr6jcw5jqzv until ").action == .none)
        #expect(complete("extend mem_1ymr6jcw5jqzv 1mo r").action == .replace(deleting: 1, insert: "reason="))
        #expect(complete("extend mem_1ymr6jcw5jqzv until 2027-01-01 r").action == .replace(deleting: 1, insert: "reason="))
        #expect(complete("extend mem_1ymr6jcw5jqzv 1mo reason=outage r").action == .none)
        #expect(complete("extend x", knowing: SessionKnowledge()).action == .none)
    }

    @Test func defineOffersEntitlementsThenProductsNotYetTyped() {
        #expect(complete("define ").action == .list(["beta", "pro"]))
        #expect(complete("define pro prod_pro_monthly p").action == .replace(deleting: 1, insert: "prod_pro_yearly "))
        #expect(complete("define pro prod_pro_monthly r").action == .replace(deleting: 1, insert: "reason="))
    }

    @Test func helpOffersCommandNamesAsTopics() {
        #expect(complete("help gr").action == .replace(deleting: 2, insert: "grant "))
        #expect(complete("help ").candidates == CommandSpec.all.map(\.name).sorted())
        #expect(complete("help grant ").action == .none)
    }

    @Test func commandsWithoutArgumentsCompleteNothing() {
        #expect(complete("ping ").action == .none)
        #expect(complete("catalog x").action == .none)
    }
}
