/// Writes: decided against the state (`StoreState+Decisions.swift`), then applied. A single server does
/// both under one write lock (`perform`); a node of a cluster decides against its replica, commits the
/// change to the system of record, and applies it only then (`decide`, then `carryOut`).
extension EntitlementStore {
    /// Decides `write` and applies its change at once, recorded by the journal first: a single server's
    /// write. The change is visible to every read that starts after this returns.
    /// - Parameter announcing: build the change's notice for watchers.
    /// - Throws: the store's refusal (`StoreError`), or `StoreError.changesUnavailable` when the journal
    ///   takes no more changes; nothing changed then.
    public func perform(_ write: StoreWrite, announcing: Bool = false) throws(StoreError) -> AppliedWrite {
        try lock.withWriteLock { () throws(StoreError) -> AppliedWrite in
            let decision = state.decide(write, clock: clock, random: &random, tracking: false)
            if let error = decision.refusal { throw error }
            var notice: AccessNotice?
            if let change = decision.change {
                // The erasure's plan was made on this very state: nothing changed in between.
                notice = try commit(change, context: decision.context, plannedErasure: decision.plannedErasure, announcing: announcing)
            }
            // The id the next grant draws is known now: its entry in the id index starts loading while this
            // write is answered, instead of stalling the next grant's uniqueness check (a miss to memory
            // in a large store, about 6% of a bulk load's CPU per grant in `perf`).
            state.prefetchMembershipID(bits: random.peek())
            return AppliedWrite(result: state.result(of: decision), sequence: lastSequence, changed: decision.change != nil, notice: notice)
        }
    }

    /// Decides `write` against the state as it is now, without changing anything: the change it would
    /// make, and its footprint (what it looked at). For a cluster's group of writes, decided against the
    /// newest committed state and applied once committed (`carryOut`), in order, with nothing applied in
    /// between but the group's own earlier changes, which must be independent of it (`GroupFootprint`).
    public func decide(_ write: StoreWrite, using random: inout some RandomNumberGenerator) -> WriteDecision {
        lock.withReadLock { state.decide(write, clock: clock, random: &random, tracking: true) }
    }

    /// Applies a decided write's change as number `sequence` (the next one: its group committed it) and
    /// returns what its writer is told. A decision without a change is answered as decided.
    /// - Throws: `StoreError.inconsistentReplay` when `sequence` does not follow the store's last change;
    ///   the store's refusal, for a refused decision.
    public func carryOut(_ decision: WriteDecision, sequence: UInt64, announcing: Bool = false) throws(StoreError) -> AppliedWrite {
        if let error = decision.refusal { throw error }
        return try lock.withWriteLock { () throws(StoreError) -> AppliedWrite in
            guard let change = decision.change else {
                return AppliedWrite(result: state.result(of: decision), sequence: lastSequence, changed: false, notice: nil)
            }
            guard sequence == lastSequence + 1 else {
                throw .inconsistentReplay("change \(sequence) follows change \(lastSequence)")
            }
            lastSequence = sequence
            // The plan of an erasure is made again: the group's earlier changes may have been applied since.
            let notice = applyAnnouncing(change, context: decision.context, sequence: sequence, plannedErasure: nil, announcing: announcing)
            return AppliedWrite(result: state.result(of: decision), sequence: sequence, changed: true, notice: notice)
        }
    }
}

extension EntitlementStore {
    /// What the writer of `decision` (not refused) is told, read from the store as it is now: a decision
    /// without a change, answered as decided, or one whose change the store already holds (`sequence` is
    /// then the store's newest).
    public func unchangedResult(of decision: WriteDecision) -> AppliedWrite {
        lock.withReadLock { AppliedWrite(result: state.result(of: decision), sequence: lastSequence, changed: false, notice: nil) }
    }
}

// MARK: One method per write

extension EntitlementStore {
    /// Creates a membership for `grant` and returns it. It is visible to every read that starts after
    /// this returns. A grant with the `idempotencyKey` of an earlier one creates nothing and returns the
    /// earlier grant's membership as it is now (`Recorded.isReplay`).
    ///
    /// A grant whose transaction belongs to a subscription a membership already holds (the same
    /// `originalTransactionId`) reports a purchase the store knows: it creates nothing. When that
    /// membership is the grant's subject's, it is returned as it is (`Recorded.isReplay`); when another
    /// owner holds it (a restore on another account), `transfers` decides: `.transfer` moves it to the
    /// grant's user (`Recorded.transferredFrom` says from whom), `.keep` refuses. The product, expiry and
    /// terms of such a grant are not applied: the membership's own are the store's record of the purchase.
    /// - Throws: `StoreError.idempotencyKeyReused` when that earlier grant asked for something else;
    ///   `StoreError.purchaseOwnedElsewhere` when the transfer rule keeps the purchase with its owner (or
    ///   the grant names no user to move it to); `StoreError.changesUnavailable` when the journal takes
    ///   no more changes.
    public func grant(
        _ grant: Grant, by author: ChangeAuthor = .local, transfers rule: TransferRule = .transfer
    ) throws(StoreError) -> Recorded<Membership> {
        let applied = try perform(.grant(grant, author: author, transfers: rule))
        guard case .granted(let membership, let isReplay, let formerOwner) = applied.result else { preconditionFailure("a grant's result") }
        var recorded = Recorded(membership, sequence: applied.sequence, isReplay: isReplay)
        recorded.transferredFrom = formerOwner
        return recorded
    }

    /// Gives every unclaimed membership bought on `device` to `user` (the SDKs' `logIn(appUserId:)`) and
    /// returns how many moved. Memberships another user already claimed stay with that user, so a repeated
    /// claim moves nothing, records nothing and returns 0.
    /// - Throws: `StoreError.changesUnavailable` when the journal takes no more changes.
    public func claim(device: String, user: String, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<Int> {
        let recorded = try claimMemberships(device: device, user: user, by: author)
        return Recorded(recorded.value.count, sequence: recorded.sequence)
    }

    /// Gives every unclaimed membership bought on `device` to `user`, as `claim(device:user:by:)` does,
    /// and returns them as they are after the claim (empty when nothing moved).
    public func claimMemberships(device: String, user: String, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<[Membership]> {
        let applied = try perform(.claim(device: device, user: user, author: author))
        guard case .claimed(let memberships) = applied.result else { preconditionFailure("a claim's result") }
        return Recorded(memberships, sequence: applied.sequence)
    }

    /// Revokes a membership and returns it. Revoking a revoked membership changes nothing and returns it
    /// as it is, with its first revocation time and reason.
    /// - Parameter reason: free text such as `refund` or `chargeback`; `Revocation.defaultReason` if `nil`.
    ///   It is also the audit trail's reason.
    /// - Throws: `StoreError.unknownMembership` when no membership has this id;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func revoke(_ id: MembershipID, reason: String?, actor: String = ChangeContext.localActor) throws(StoreError) -> Recorded<Membership> {
        let applied = try perform(.revoke(id, reason: reason, actor: actor))
        guard case .revoked(let membership, let isReplay) = applied.result else { preconditionFailure("a revocation's result") }
        return Recorded(membership, sequence: applied.sequence, isReplay: isReplay)
    }

    /// Moves the expiry of membership `id` later, by hand: a support agent's goodwill or compensation, with
    /// no store event behind it. `.by(span)` adds to the expiry, or to now when the membership has already
    /// expired; `.until(moment)` sets it, later than both. The audit trail keeps the expiry before
    /// (`MembershipRevision.Action.extend`). A store's later event that reports an expiry (a renewal) sets
    /// that one, as it would have without the extension.
    ///
    /// Not idempotent: `.by` twice extends twice. A caller that may send it again (a retry after a lost
    /// connection) gives `.until`, which a repeat cannot move further.
    /// - Returns: the membership as extended, and the expiry it had before.
    /// - Throws: `StoreError.unknownMembership` when no membership has this id; `StoreError.cannotExtend`
    ///   when it is revoked or never expires, or the new expiry is not later than both its expiry and now;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func extend(
        _ id: MembershipID, _ extensionAsked: ExpiryExtension, by author: ChangeAuthor = .local
    ) throws(StoreError) -> Recorded<(membership: Membership, previousExpiresAt: Timestamp)> {
        let applied = try perform(.extend(id, extensionAsked, author: author))
        guard case .extended(let membership, let previous) = applied.result else { preconditionFailure("an extension's result") }
        return Recorded((membership, previous), sequence: applied.sequence)
    }

    /// Sets the products that unlock `entitlement`, replacing any it had, and returns them as stored
    /// (sorted, without duplicates). An empty list keeps the entitlement defined with nothing unlocking it
    /// (the protocol refuses one since version 2: `undefine` removes an entitlement; old logs still hold
    /// such defines).
    /// - Throws: `StoreError.changesUnavailable` when the journal takes no more changes.
    @discardableResult
    public func define(entitlement: String, products: [String], by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<[String]> {
        let applied = try perform(.define(entitlement: entitlement, products: products, author: author))
        guard case .defined(let products) = applied.result else { preconditionFailure("a definition's result") }
        return Recorded(products, sequence: applied.sequence)
    }

    /// Removes `entitlement` from the catalog and returns the products it had (sorted). A check of it is
    /// `not_found` from then on; its audit trail keeps the removal.
    /// - Throws: `StoreError.nothingToUndefine` when the catalog does not define it;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func undefine(entitlement: String, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<[String]> {
        let applied = try perform(.undefine(entitlement: entitlement, author: author))
        guard case .undefined(let products) = applied.result else { preconditionFailure("an undefinition's result") }
        return Recorded(products, sequence: applied.sequence)
    }

    /// Applies a lifecycle event to the membership `id` and returns the membership after it with the
    /// outcome. An ignored event (a duplicate, out of order, or aimed at a revoked membership) records
    /// nothing and returns the membership as it is.
    /// - Throws: `StoreError.unknownMembership` when no membership has this id;
    ///   `StoreError.eventFromTheFuture` when `event.time` is more than `Limits.maximumEventLead` ahead;
    ///   `StoreError.changesUnavailable` when the journal takes no more changes.
    public func apply(
        _ event: LifecycleEvent, to id: MembershipID, by author: ChangeAuthor = .local
    ) throws(StoreError) -> Recorded<(membership: Membership, outcome: EventOutcome)> {
        let applied = try perform(.event(event, membership: id, author: author))
        guard case .eventApplied(let membership, let outcome) = applied.result else { preconditionFailure("an event's result") }
        return Recorded((membership, outcome), sequence: applied.sequence)
    }

    /// Erases `subject`'s user and device (GDPR's right to be forgotten): the memberships the user owns
    /// and the device's unclaimed guest memberships, with their audit entries and idempotency keys; other
    /// users' memberships bought on the device lose the device. Every read afterwards answers as for a
    /// subject that never existed. The audit trail keeps an `ErasureRecord`, which names no one.
    ///
    /// Recorded even when there is nothing to erase: that an erasure was asked for is part of the trail.
    /// - Throws: `StoreError.changesUnavailable` when the journal takes no more changes.
    public func erase(_ subject: Subject, by author: ChangeAuthor = .local) throws(StoreError) -> Recorded<Erasure> {
        let applied = try perform(.erase(subject, author: author))
        guard case .erased(let erasure) = applied.result else { preconditionFailure("an erasure's result") }
        return Recorded(erasure, sequence: applied.sequence)
    }
}
