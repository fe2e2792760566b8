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

    @Test func errorsAndAnswersWithoutDataTeachNothing() throws {
        let knowledge = try learned(
            from: ProtocolLines.revokeNotFound, ProtocolLines.checkActiveUntil, ProtocolLines.claimedOne, ProtocolLines.pong
        )
        #expect(knowledge == SessionKnowledge())
    }

    @Test func anErrorResponseCarryingDataFieldsIsStillIgnored() throws {
        let knowledge = try learned(from: #"{"ok":false,"entitlement":"pro","products":["p"],"error":{"code":"internal","message":"x"}}"#)
        #expect(knowledge == SessionKnowledge())
    }
}
