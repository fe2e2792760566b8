import EntitledClient
import EntitledConsole
import Testing

/// What the session learns from the responses it sees, for completion.
@Suite struct SessionKnowledgeTests {
    func learned(from lines: String...) throws -> SessionKnowledge {
        var knowledge = SessionKnowledge()
        for line in lines { knowledge.learn(from: try response(line)) }
        return knowledge
    }

    @Test func aGrantTeachesTheMembershipItsProductAndItsDevice() throws {
        let knowledge = try learned(from: ProtocolLines.guestGrant)
        #expect(knowledge.membershipIDs == ["mem_1ymr6jcw5jqzv"])
        #expect(knowledge.products == ["prod_pro_monthly"])
        #expect(knowledge.devices == ["dev_A"])
        #expect(knowledge.users == [])
        #expect(knowledge.entitlements == [])
    }

    @Test func aRevokeTeachesTheMembershipAndItsUser() throws {
        let knowledge = try learned(from: ProtocolLines.revoked)
        #expect(knowledge.membershipIDs == ["mem_dnc456md2j73z"])
        #expect(knowledge.products == ["prod_pro_yearly"])
        #expect(knowledge.users == ["user_42"])
        #expect(knowledge.devices == [])
    }

    @Test func anExtensionTeachesTheMembershipAndItsOwnerForTheNextCommand() throws {
        let knowledge = try learned(from: ProtocolLines.extended)
        #expect(knowledge.membershipIDs == ["mem_fkg2n5hrnmp5p"])
        #expect(knowledge.membershipOwners["mem_fkg2n5hrnmp5p"] == MembershipOwner(user: "alice", device: nil))
        #expect(knowledge.users == ["alice"])
    }

    @Test func aListingTeachesEveryMembershipUserDeviceAndProduct() throws {
        let knowledge = try learned(from: ProtocolLines.memberships)
        #expect(knowledge.membershipIDs == ["mem_dnc456md2j73z", "mem_bydn4qrrzzhrt", "mem_1ymr6jcw5jqzv"])
        #expect(knowledge.products == ["prod_pro_yearly", "prod_pro_monthly"])
        #expect(knowledge.users == ["user_42"])
        #expect(knowledge.devices == ["dev_A", "dev_B"])
    }

    @Test func theCatalogTeachesEntitlementsAndTheirProducts() throws {
        let knowledge = try learned(from: ProtocolLines.catalog)
        #expect(knowledge.entitlements == ["beta", "pro"])
        #expect(knowledge.products == ["prod_pro_monthly", "prod_pro_yearly"])
        #expect(knowledge.membershipIDs == [])
    }

    @Test func aDefinitionTeachesTheEntitlementEvenWithoutProducts() throws {
        let knowledge = try learned(from: ProtocolLines.definePro, ProtocolLines.defineBeta)
        #expect(knowledge.entitlements == ["pro", "beta"])
        #expect(knowledge.products == ["prod_pro_monthly", "prod_pro_yearly"])
    }

    @Test func knowledgeAccumulatesAcrossResponses() throws {
        let knowledge = try learned(from: ProtocolLines.guestGrant, ProtocolLines.lifetimeGrant, ProtocolLines.catalog)
        #expect(knowledge.membershipIDs == ["mem_1ymr6jcw5jqzv", "mem_dnc456md2j73z"])
        #expect(knowledge.products == ["prod_pro_monthly", "prod_pro_yearly"])
        #expect(knowledge.users == ["user_42"])
        #expect(knowledge.devices == ["dev_A"])
        #expect(knowledge.entitlements == ["beta", "pro"])
    }

    @Test func aHistoryTeachesEveryMembershipItShowsWithItsOwners() throws {
        let knowledge = try learned(from: ProtocolLines.history)
        #expect(knowledge.membershipIDs == ["mem_cz4anm64j98tp", "mem_92dpedc461kg5"])
        #expect(knowledge.products == ["prod_lifetime", "prod_plus_m"])
        #expect(knowledge.users == ["user_7"])
        #expect(knowledge.devices == ["dev_7", "dev_8"])
        #expect(knowledge.entitlements == [])
    }

    @Test func anEntitlementsHistoryTeachesItsDefinitions() throws {
        let knowledge = try learned(from: ProtocolLines.historyEntitlement)
        #expect(knowledge.entitlements == ["plus"])
        #expect(knowledge.products == ["prod_plus_m", "prod_plus_y"])
    }

    @Test func aCustomerTeachesItsEntitlementsProductsAndMemberships() throws {
        let knowledge = try learned(from: ProtocolLines.customer)
        #expect(knowledge.entitlements == ["plus"])
        #expect(knowledge.products == ["prod_plus_m"])
        #expect(knowledge.membershipIDs == ["mem_92dpedc461kg5"])
        #expect(try learned(from: ProtocolLines.customerUnknown) == SessionKnowledge())
    }

    @Test func anEventTeachesItsMembership() throws {
        let knowledge = try learned(from: ProtocolLines.billingIssue)
        #expect(knowledge.membershipIDs == ["mem_92dpedc461kg5"])
        #expect(knowledge.users == ["user_7"])
    }

    @Test func aPushedLineTeachesItsMembership() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try #require(EntitledPush(pushedLine: ProtocolLines.pushGrant)))
        #expect(knowledge.membershipIDs == ["mem_2p12nek6vz5pf"])
        #expect(knowledge.products == ["prod_plus_m"])
        #expect(knowledge.users == ["user_9"])
    }

    @Test func errorsAndAnswersWithoutDataTeachNothing() throws {
        let knowledge = try learned(
            from: ProtocolLines.revokeNotFound, ProtocolLines.checkActiveUntil, ProtocolLines.claimedOne, ProtocolLines.pong,
            ProtocolLines.watch, ProtocolLines.historyEmpty, ProtocolLines.conflict
        )
        #expect(knowledge == SessionKnowledge())
    }

    @Test func anErrorResponseCarryingDataFieldsIsStillIgnored() throws {
        let knowledge = try learned(from: #"{"ok":false,"entitlement":"pro","products":["p"],"error":{"code":"internal","message":"x"}}"#)
        #expect(knowledge == SessionKnowledge())
    }
}
