import EntitledClient
import EntitledConsole
import Testing

/// What `revoke`, `undefine` and `erase` show before they ask, and how the answer is read.
@Suite struct ConfirmationPreviewTests {
    let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)

    func request(_ line: String) throws -> (command: ConfirmedRemoval, request: EntitledRequest) {
        guard case .request(let command, let request)? = try CommandParser.parse(line: line), let removal = ConfirmedRemoval(command) else {
            Issue.record("\(line) is not a request that asks for confirmation")
            return (.revoke, .ping)
        }
        return (removal, request)
    }

    // MARK: revoke

    @Test func revokeLooksUpTheMembershipsOfTheOwnerTheSessionSaw() throws {
        var knowledge = SessionKnowledge()
        knowledge.learn(from: try response(ProtocolLines.memberships))
        let (command, revoke) = try request("revoke mem_bydn4qrrzzhrt refund")
        #expect(ConfirmationPreview.lookup(command, request: revoke, knowledge: knowledge) == .memberships(user: "user_42", device: "dev_B", limit: 1000))
        let (_, unseen) = try request("revoke mem_0000000000000")
        #expect(ConfirmationPreview.lookup(command, request: unseen, knowledge: knowledge) == nil)
    }

    @Test func revokeShowsTheRowOfTheMembershipItTakesBack() throws {
        let (command, revoke) = try request("revoke mem_bydn4qrrzzhrt refund")
        let text = ConfirmationPreview.text(command, request: revoke, lookup: try response(ProtocolLines.memberships), renderer: renderer)
        let lines = text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.count == 3, "\(text)")
        #expect(lines.first == "this takes back:")
        #expect(lines.last?.hasPrefix("mem_bydn4qrrzzhrt prod_pro_yearly active yes 2027-12-20T23:00:00Z") == true, "\(text)")
        #expect(ConfirmationPreview.question(command, request: revoke) == "revoke mem_bydn4qrrzzhrt? [y/N] ")
    }

    @Test func revokeOfAMembershipTheSessionHasNotSeenSaysItCannotShowIt() throws {
        let (command, revoke) = try request("revoke mem_0000000000000")
        #expect(
            ConfirmationPreview.text(command, request: revoke, lookup: nil, renderer: renderer)
                == "revoke mem_0000000000000: this session has not seen that membership, so it cannot show it (show SUBJECT lists a subject's)"
        )
    }

    // MARK: undefine

    @Test func undefineShowsTheEntitlementAndItsProductsFromTheCatalog() throws {
        let (command, undefine) = try request("undefine pro")
        #expect(ConfirmationPreview.lookup(command, request: undefine, knowledge: SessionKnowledge()) == .catalog)
        let text = ConfirmationPreview.text(command, request: undefine, lookup: try response(ProtocolLines.catalog), renderer: renderer)
        #expect(
            text == """
                this removes from the catalog:
                ENTITLEMENT  PRODUCTS
                pro          prod_pro_monthly, prod_pro_yearly
                afterwards no product unlocks pro: checks of entitlement:pro answer not active; memberships stay
                """
        )
        #expect(ConfirmationPreview.question(command, request: undefine) == "undefine pro? [y/N] ")
    }

    @Test func undefineOfAnEntitlementTheCatalogLacksSaysSo() throws {
        let (command, undefine) = try request("undefine gold")
        let text = ConfirmationPreview.text(command, request: undefine, lookup: try response(ProtocolLines.catalog), renderer: renderer)
        #expect(text == "the catalog has no entitlement gold; the server will say so")
    }

    // MARK: erase

    @Test func eraseShowsTheSubjectsMembershipsAndCountsThem() throws {
        let (command, erase) = try request("erase user:user_42")
        #expect(ConfirmationPreview.lookup(command, request: erase, knowledge: SessionKnowledge()) == .memberships(user: "user_42", limit: 1000))
        let text = ConfirmationPreview.text(command, request: erase, lookup: try response(ProtocolLines.memberships), renderer: renderer)
        let lines = text.split(separator: "\n")
        #expect(
            lines.first
                == "this erases user:user_42 for good: 3 memberships, its device links, idempotency keys and every history entry naming it"
        )
        #expect(lines.count == 5, "\(text)")
        #expect(lines.dropFirst(2).allSatisfy { $0.hasPrefix("mem_") })
        #expect(ConfirmationPreview.question(command, request: erase) == "erase user:user_42? [y/N] ")
    }

    @Test func eraseOfAUserAndADeviceNamesBoth() throws {
        let (command, erase) = try request("erase user:u1 device:d1")
        let text = ConfirmationPreview.text(command, request: erase, lookup: try response(ProtocolLines.noMemberships), renderer: renderer)
        #expect(text == "this erases user:u1 device:d1 for good: 0 memberships, its device links, idempotency keys and every history entry naming it")
        #expect(ConfirmationPreview.question(command, request: erase) == "erase user:u1 device:d1? [y/N] ")
    }

    @Test func aLookUpRefusedByTheServerIsShownInsteadOfThePreview() throws {
        let (command, erase) = try request("erase user:u1")
        let refused = try response(#"{"ok":false,"error":{"code":"forbidden","message":"this token may only check"}}"#)
        #expect(
            ConfirmationPreview.text(command, request: erase, lookup: refused, renderer: renderer)
                == "cannot show what erase will touch: (error) forbidden: this token may only check"
        )
    }

    // MARK: the answer

    @Test func onlyYOrYesConfirmsAndTheDefaultIsNo() {
        for yes in ["y", "Y", "yes", "YES", " yes "] { #expect(ConfirmationPreview.isYes(yes), "\(yes)") }
        for no in ["", "n", "no", "yess", "ok", "sure", "y y"] { #expect(!ConfirmationPreview.isYes(no), "\(no)") }
    }

    @Test func aDeclinedCommandSaysNothingWasDone() {
        #expect(ConfirmationPreview.declined(.revoke) == "nothing was revoked")
        #expect(ConfirmationPreview.declined(.undefine) == "nothing was removed")
        #expect(ConfirmationPreview.declined(.erase) == "nothing was erased")
    }

    @Test func withoutSomeoneToAskTheRefusalSaysToPassYes() throws {
        let error = ConsoleUsageError.confirmationRequired(try spec("erase"))
        #expect(error.message == "erase needs confirmation, and there is nobody to ask here: run it as entitlectl --yes erase ... (nothing was sent)")
    }
}
