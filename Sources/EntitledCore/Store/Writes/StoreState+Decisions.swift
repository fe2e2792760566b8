/// How each write is decided: read-only, against the state as it is. Every value the change needs (ids,
/// times) is chosen here, so that applying the change, now or after a cluster committed it, gives the
/// same state everywhere.
///
/// `mutating` although nothing is written, for the reason `forEachVisibleAccess` gives: a non-mutating
/// method on the store's state pointer copied the whole state first.
extension StoreState {
    mutating func decide(
        _ write: StoreWrite, clock: () -> Timestamp, random: inout some RandomNumberGenerator, tracking: Bool
    ) -> WriteDecision {
        var footprint = WriteFootprint(tracking: tracking)
        switch write {
        case .grant(let grant, let author, let rule):
            return decideGrant(grant, by: author, rule: rule, clock: clock, random: &random, footprint: &footprint)
        case .claim(let device, let user, let author):
            footprint.add(.device, device)
            footprint.add(.user, user)
            let slots = unclaimedSlotsList(device)
            guard !slots.isEmpty else { return Self.unchanged(.claimed([]), footprint) }
            for slot in slots { footprint.add(memberships[slot]) }
            return WriteDecision(
                change: .claim(device: device, user: user), context: author.context(at: clock()), footprint: footprint,
                outcome: .claimed(slots.map { memberships[$0].id })
            )
        case .revoke(let id, let reason, let actor):
            footprint.add(id)
            guard let existing = membership(withID: id) else { return Self.refused(.unknownMembership(id), footprint) }
            footprint.add(existing)
            guard existing.revocation == nil else { return Self.unchanged(.revoked(existing, isReplay: true), footprint) }
            let revocation = Revocation(revokedAt: clock(), reason: reason ?? Revocation.defaultReason)
            return WriteDecision(
                change: .revoke(id, revocation), context: ChangeContext(actor: actor, reason: reason, recordedAt: revocation.revokedAt),
                footprint: footprint, outcome: .revoked(id)
            )
        case .define(let entitlement, let products, let author):
            footprint.add(.entitlement, entitlement)
            return WriteDecision(
                change: .define(entitlement: entitlement, products: products), context: author.context(at: clock()),
                footprint: footprint, outcome: .defined(entitlement)
            )
        case .undefine(let entitlement, let author):
            footprint.add(.entitlement, entitlement)
            guard let products = catalog[entitlement]?.sorted else { return Self.refused(.nothingToUndefine(entitlement), footprint) }
            return WriteDecision(
                change: .undefine(entitlement: entitlement), context: author.context(at: clock()), footprint: footprint,
                outcome: .known(.undefined(products: products))
            )
        case .event(let event, let id, let author):
            footprint.add(id)
            guard let existing = membership(withID: id) else { return Self.refused(.unknownMembership(id), footprint) }
            footprint.add(existing)
            let now = clock()
            guard event.time <= now.adding(Limits.maximumEventLead) else {
                return Self.refused(.eventFromTheFuture(eventTime: event.time, now: now), footprint)
            }
            let (result, outcome) = existing.applying(event)
            guard outcome.isApplied else { return Self.unchanged(.eventApplied(existing, outcome), footprint) }
            footprint.add(result)
            return WriteDecision(
                change: .event(event, result: result), context: author.context(at: now), footprint: footprint,
                outcome: .eventApplied(outcome)
            )
        case .extend(let id, let extensionAsked, let author):
            footprint.add(id)
            guard let existing = membership(withID: id) else { return Self.refused(.unknownMembership(id), footprint) }
            footprint.add(existing)
            if let revocation = existing.revocation { return Self.refused(.cannotExtend(id, .revoked(revocation)), footprint) }
            guard let expiresAt = existing.expiresAt else { return Self.refused(.cannotExtend(id, .lifetime), footprint) }
            let now = clock()
            let extended = extensionAsked.newExpiry(from: expiresAt, now: now)
            guard extended > expiresAt else {
                return Self.refused(.cannotExtend(id, .notLater(requested: extended, expiresAt: expiresAt)), footprint)
            }
            guard extended > now else { return Self.refused(.cannotExtend(id, .inThePast(requested: extended, now: now)), footprint) }
            guard extended <= Timestamp.rfc3339Range.upperBound else {
                return Self.refused(.cannotExtend(id, .beyondRange(expiresAt: expiresAt)), footprint)
            }
            return WriteDecision(
                change: .extend(id, expiresAt: extended), context: author.context(at: now), footprint: footprint,
                outcome: .extended(id, previousExpiresAt: expiresAt)
            )
        case .erase(let subject, let author):
            footprint.isExclusive = true
            let plan = erasurePlan(user: subject.user, device: subject.device)
            let erased = plan.erased.map { memberships[$0] }
            return WriteDecision(
                change: .erase(user: subject.user, device: subject.device), context: author.context(at: clock()),
                footprint: footprint, outcome: .known(.erased(Erasure(memberships: erased, historyEntries: plan.historyEntries))),
                plannedErasure: plan
            )
        }
    }

    /// A grant: a replay of an earlier one with its idempotency key, a purchase the store knows, or a new
    /// membership.
    private mutating func decideGrant(
        _ grant: Grant, by author: ChangeAuthor, rule: TransferRule, clock: () -> Timestamp,
        random: inout some RandomNumberGenerator, footprint: inout WriteFootprint
    ) -> WriteDecision {
        footprint.add(grant.subject)
        if let transaction = grant.transaction {
            footprint.add(.transaction, transaction.id)
            footprint.add(.originalTransaction, transaction.originalTransactionId)
        }
        if let key = grant.idempotencyKey {
            footprint.add(.idempotencyKey, key)
            if let slot = slot(forIdempotencyKey: key) {
                let existing = memberships[slot]
                footprint.add(existing)
                // Compared as the earlier grant created it: a claim or a product change since does not
                // make a genuine retry a conflict, nor does an erasure of the device since.
                guard grant.matches(membershipAsCreated(atSlot: slot)) || isRetryAfterDeviceErasure(grant, ofSlot: slot) else {
                    return Self.refused(.idempotencyKeyReused(key: key, membership: existing.id), footprint)
                }
                return Self.unchanged(.granted(existing, isReplay: true, transferredFrom: nil), footprint)
            }
        }
        if let transaction = grant.transaction, let slot = slots(ofOriginalTransaction: transaction.originalTransactionId).last {
            return decideKnownPurchase(grant, heldAt: slot, by: author, rule: rule, clock: clock, footprint: &footprint)
        }
        // Read the clock where the writes are ordered: the change is recorded now, whenever the purchase was.
        let now = clock()
        let createdAt: Timestamp
        if let purchasedAt = grant.purchasedAt {
            // An import: the membership exists from the store's sale on, as checks of the past see it. A
            // moment ahead of the clock (by less than clocks disagree) is taken as now, so that no
            // membership begins after the change that made it: checks of a moment after the newest change
            // read the present, which must then hold it.
            guard purchasedAt <= now.adding(Limits.maximumEventLead) else {
                return Self.refused(.purchaseFromTheFuture(purchasedAt: purchasedAt, now: now), footprint)
            }
            createdAt = min(purchasedAt, now)
        } else {
            createdAt = now
        }
        let expiresAt: Timestamp?
        switch grant.expiry {
        case .lifetime: expiresAt = nil
        case .at(let moment): expiresAt = moment
        case .after(let span): expiresAt = createdAt.adding(span)
        }
        // Every membership ever made stays in the store (and in its snapshots), so checking against it
        // keeps ids unique across restarts as well.
        var id = MembershipID.random(using: &random)
        while containsMembership(withID: id) {
            id = MembershipID.random(using: &random)
        }
        let membership = Membership(
            id: id,
            productId: grant.productId,
            planId: grant.planId,
            device: grant.subject.device,
            user: grant.subject.user,
            createdAt: createdAt,
            expiresAt: expiresAt,
            source: grant.source,
            lifecycle: grant.initialLifecycle(createdAt: createdAt, expiresAt: expiresAt)
        )
        footprint.add(membership)
        return WriteDecision(
            change: .create(membership, idempotencyKey: grant.idempotencyKey), context: author.context(at: now),
            footprint: footprint, outcome: .created
        )
    }

    /// A grant of a purchase the membership at `slot` holds (see `EntitlementStore.grant`).
    private mutating func decideKnownPurchase(
        _ grant: Grant, heldAt slot: Int, by author: ChangeAuthor, rule: TransferRule, clock: () -> Timestamp,
        footprint: inout WriteFootprint
    ) -> WriteDecision {
        let existing = memberships[slot]
        footprint.add(existing)
        let original = grant.transaction?.originalTransactionId ?? ""
        let sameOwner =
            grant.subject.user.map { existing.user == $0 } ?? (existing.user == nil && existing.device == grant.subject.device)
        if sameOwner { return Self.unchanged(.granted(existing, isReplay: true, transferredFrom: nil), footprint) }
        guard let user = grant.subject.user else {
            // A guest (device-only) grant cannot take a purchase over: a device is no account to restore to.
            return Self.refused(.purchaseOwnedElsewhere(originalTransactionId: original, membership: existing.id, rule: nil), footprint)
        }
        guard rule == .transfer else {
            return Self.refused(.purchaseOwnedElsewhere(originalTransactionId: original, membership: existing.id, rule: rule), footprint)
        }
        let formerOwner = Subject(user: existing.user, device: existing.user == nil ? existing.device : nil)
        return WriteDecision(
            change: .transfer(existing.id, toUser: user), context: author.context(at: clock()), footprint: footprint,
            outcome: .transferred(existing.id, formerOwner: formerOwner)
        )
    }

    /// What the writer of `decision` is told, read once its change (if any) is applied to this state.
    ///
    /// `mutating` although it changes nothing, for the reason `forEachVisibleAccess` gives: called through
    /// the store's state pointer, the non-mutating form copied the whole `StoreState` (retaining and
    /// releasing every table in it) on every write, about 2% of a bulk load's CPU per grant in `perf`.
    mutating func result(of decision: WriteDecision) -> WriteResult {
        switch decision.outcome {
        case .known(let result):
            return result
        case .created:
            guard case .create(let membership, _) = decision.change else { preconditionFailure("a creation's change creates") }
            return .granted(membership, isReplay: false, transferredFrom: nil)
        case .eventApplied(let outcome):
            guard case .event(_, let membership) = decision.change else { preconditionFailure("an event's change records it") }
            return .eventApplied(membership, outcome)
        case .transferred(let id, let formerOwner):
            return .granted(membership(withID: id)!, isReplay: false, transferredFrom: formerOwner)
        case .revoked(let id):
            return .revoked(membership(withID: id)!, isReplay: false)
        case .extended(let id, let previousExpiresAt):
            return .extended(membership(withID: id)!, previousExpiresAt: previousExpiresAt)
        case .claimed(let ids):
            return .claimed(ids.map { membership(withID: $0)! })
        case .defined(let entitlement):
            return .defined(products: catalog[entitlement]?.sorted ?? [])
        case .refused(let error):
            preconditionFailure("a refused write has no result (\(error))")
        }
    }

    private static func unchanged(_ result: WriteResult, _ footprint: WriteFootprint) -> WriteDecision {
        WriteDecision(change: nil, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0)), footprint: footprint, outcome: .known(result))
    }

    private static func refused(_ error: StoreError, _ footprint: WriteFootprint) -> WriteDecision {
        WriteDecision(change: nil, context: ChangeContext(recordedAt: Timestamp(millisecondsSinceEpoch: 0)), footprint: footprint, outcome: .refused(error))
    }
}

extension ChangeAuthor {
    /// The context of a change this author makes at `moment`.
    func context(at moment: Timestamp) -> ChangeContext {
        ChangeContext(actor: actor, reason: reason, recordedAt: moment)
    }
}
