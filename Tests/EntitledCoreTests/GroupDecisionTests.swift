import EntitledTestSupport
import Foundation
import Testing

@testable import EntitledCore

/// A group of writes decided against one state, then applied in order, must make exactly the changes the
/// same writes make one after another (each decided against the state the ones before it left): a
/// cluster decides its groups this way (and accepts a group decided against an older state when no change
/// committed since touches its footprint). `GroupFootprint` admits only writes for which this holds.
@Suite struct GroupDecisionTests {
    /// Numbers that depend only on their seed, so that two decisions of the same write draw the same
    /// membership ids.
    typealias Seeded = SeededRandom

    /// Random writes over a few users, devices, keys, purchases and memberships, so that they often touch
    /// the same things.
    struct WriteMaker {
        var random: Seeded
        let clock: TestClock
        /// The names writes choose from; a group narrows them, so that its writes meet.
        var users = ["u0", "u1", "u2", "u3"], devices = ["d0", "d1", "d2", "d3"], keys = ["k0", "k1", "k2"], originals = ["t0", "t1", "t2"]

        mutating func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }

        /// Two of each, among them names no write used before (a device without purchases, a new user).
        mutating func narrow() {
            users = [pick(["u0", "u1", "u2", "u3"]), pick(["u4", "u5"])]
            devices = [pick(["d0", "d1", "d2", "d3"]), pick(["d4", "d5"])]
            keys = [pick(["k0", "k1", "k2"]), "k9"]
            originals = [pick(["t0", "t1", "t2"]), "t9"]
        }

        mutating func write(knownIDs: [MembershipID]) -> StoreWrite {
            let (users, devices, keys, originals) = (self.users, self.devices, self.keys, self.originals)
            let products = ["p0", "p1"]
            let author = ChangeAuthor(actor: pick(["local", "admin"]), reason: pick([nil, "support"]))
            let ids = knownIDs.isEmpty ? [MembershipID(bits: 42)] : knownIDs + [MembershipID(bits: 42)]
            switch random.next() % 10 {
            case 0, 1, 2:
                let subject: Subject = pick([Subject(user: pick(users), device: nil)!, Subject(user: nil, device: pick(devices))!, Subject(user: pick(users), device: pick(devices))!])
                // An event's transaction on a membership bought without one becomes a purchase grants find.
                let original = pick([nil, "\(originals[0])-9"] + originals.map(Optional.some))
                let transaction = original.map { Grant.Transaction(id: "\($0)-\(random.next() % 3)", originalTransactionId: $0) }
                let grant = Grant(
                    subject: subject, productId: pick(products), expiry: pick([.lifetime, .after(TimeSpan(milliseconds: 86_400_000))]),
                    transaction: transaction, idempotencyKey: pick([nil] + keys.map(Optional.some))
                )
                return .grant(grant, author: author, transfers: pick([.transfer, .keep]))
            case 3:
                return .claim(device: pick(devices), user: pick(users), author: author)
            case 4:
                return .revoke(pick(ids), reason: pick([nil, "refund"]), actor: author.actor)
            case 5, 6:
                let kinds: [LifecycleEvent.Kind] = [
                    .renewal(expiresAt: clock.now.adding(milliseconds: 3_600_000)), .cancellation, .uncancellation, .pause,
                    .resume(expiresAt: nil), .refund, .refundReversal, .billingIssue(gracePeriodExpiresAt: nil), .productChange(productId: "p1"),
                ]
                let event = LifecycleEvent(
                    id: pick(["e0", "e1", "e2", "e3"]), time: clock.now.adding(milliseconds: Int64(random.next() % 1000)), kind: pick(kinds),
                    transactionId: pick([nil, "\(originals[0])-9", "\(originals[1])-9"])
                )
                return .event(event, membership: pick(ids), author: author)
            case 7:
                return .define(entitlement: pick(["pro", "plus"]), products: [pick(products)], author: author)
            case 8:
                return .undefine(entitlement: pick(["pro", "plus"]), author: author)
            default:
                return .erase(pick([Subject(user: pick(users), device: nil)!, Subject(user: nil, device: pick(devices))!]), author: author)
            }
        }
    }

    /// What a decision says, in a form two decisions can be compared by.
    static func summary(_ decision: WriteDecision) -> String {
        String(reflecting: decision.change) + " | " + String(reflecting: decision.outcome)
    }

    @Test func independentWritesDecidedTogetherMakeTheChangesTheyMakeOneAfterAnother() throws {
        var groupsChecked = 0
        var membersChecked = 0
        for seed in UInt64(1)...600 {
            let clock = TestClock(referenceTime)
            var maker = WriteMaker(random: Seeded(seed: seed), clock: clock)
            let store = EntitlementStore(clock: { clock.now })
            // A history first, so that the group meets memberships, keys, claims and events.
            for _ in 0..<40 {
                var ids = Seeded(seed: maker.random.next())
                let decision = store.decide(maker.write(knownIDs: knownIDs(in: store)), using: &ids)
                if decision.change != nil { _ = try store.carryOut(decision, sequence: store.sequence + 1) }
                clock.advance(by: TimeSpan(milliseconds: 7))
            }
            // Then a group: every write decided against the state before the group, as long as admitted.
            let before = EntitlementStore(restoring: store.image(), clock: { clock.now })
            maker.narrow()
            let known = knownIDs(in: store, users: maker.users, devices: maker.devices)
            let writes = (0..<12).map { _ in maker.write(knownIDs: known) }
            let seeds = writes.map { _ in maker.random.next() }
            var footprint = GroupFootprint()
            var members: [(write: StoreWrite, seed: UInt64, decision: WriteDecision)] = []
            for (write, seed) in zip(writes, seeds) {
                var ids = Seeded(seed: seed)
                let decision = before.decide(write, using: &ids)
                guard footprint.admit(decision.footprint) else { break }
                members.append((write, seed, decision))
            }
            // One after another, each decided against what the ones before it left.
            let serial = EntitlementStore(restoring: store.image(), clock: { clock.now })
            for member in members {
                var ids = Seeded(seed: member.seed)
                let alone = serial.decide(member.write, using: &ids)
                #expect(Self.summary(alone) == Self.summary(member.decision), "seed \(seed): \(member.write)")
                if member.decision.change != nil { _ = try serial.carryOut(member.decision, sequence: serial.sequence + 1) }
                membersChecked += 1
            }
            groupsChecked += 1
        }
        // The check must have looked at real groups, not only at groups of one.
        #expect(groupsChecked == 600)
        #expect(membersChecked > 600 * 3 / 2)
    }

    @Test func aWriteThatDependsOnAnEarlierOneOfItsGroupIsNotAdmitted() {
        let store = makeStore()
        var ids = Seeded(seed: 7)
        let grant = StoreWrite.grant(Grant(subject: Subject(user: nil, device: "d1")!, productId: "p", idempotencyKey: "k"), author: .local, transfers: .transfer)
        let claim = StoreWrite.claim(device: "d1", user: "u1", author: .local)
        let again = StoreWrite.grant(Grant(subject: Subject(user: "u9", device: nil)!, productId: "p", idempotencyKey: "k"), author: .local, transfers: .transfer)
        let erase = StoreWrite.erase(Subject(user: "u7", device: nil)!, author: .local)
        var footprint = GroupFootprint()
        let grantTaken = footprint.admit(store.decide(grant, using: &ids).footprint)
        // The claim would find the guest purchase the grant makes; the second grant, its idempotency key.
        let claimTaken = footprint.admit(store.decide(claim, using: &ids).footprint)
        let againTaken = footprint.admit(store.decide(again, using: &ids).footprint)
        // An erasure is decided alone.
        let eraseTaken = footprint.admit(store.decide(erase, using: &ids).footprint)
        #expect(grantTaken && !claimTaken && !againTaken && !eraseTaken)
        var alone = GroupFootprint()
        let eraseAlone = alone.admit(store.decide(erase, using: &ids).footprint)
        let afterErase = alone.admit(store.decide(StoreWrite.claim(device: "d5", user: "u5", author: .local), using: &ids).footprint)
        #expect(eraseAlone && !afterErase)
    }

    @Test func anEventThatGivesAMembershipItsFirstTransactionAndAGrantOfThatPurchaseAreNotDecidedTogether() throws {
        let store = makeStore()
        let owned = try store.grant(Grant(subject: Subject(user: "u1", device: nil)!, productId: "p")).value
        var ids = Seeded(seed: 9)
        let renewal = LifecycleEvent(id: "e1", time: referenceTime, kind: .renewal(expiresAt: referenceTime.adding(milliseconds: 60_000)), transactionId: "T1")
        let event = store.decide(.event(renewal, membership: owned.id, author: .local), using: &ids)
        let restore = Grant(subject: Subject(user: "u2", device: nil)!, productId: "p", transaction: Grant.Transaction(id: "T1"))
        let grant = store.decide(.grant(restore, author: .local, transfers: .transfer), using: &ids)
        var footprint = GroupFootprint()
        let eventTaken = footprint.admit(event.footprint)
        let grantTaken = footprint.admit(grant.footprint)
        // After the event, "T1" is the purchase of u1's membership: the grant moves it to u2 rather than
        // making a new one.
        #expect(eventTaken && !grantTaken)
    }

    func knownIDs(in store: EntitlementStore, users: [String] = ["u0", "u1", "u2", "u3"], devices: [String] = ["d0", "d1", "d2", "d3"]) -> [MembershipID] {
        users.flatMap { store.memberships(visibleTo: Subject(user: $0, device: nil)!).map(\.id) }
            + devices.flatMap { store.memberships(visibleTo: Subject(user: nil, device: $0)!).map(\.id) }
    }
}
