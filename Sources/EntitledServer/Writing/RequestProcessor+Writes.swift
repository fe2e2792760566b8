import EntitledCore
import EntitledWire
import NIOCore

/// Writes as the wire asks for them and answers them: the same for both backends.
extension RequestProcessor {
    /// The store's write `request` asks for, attributed to `access.actor`; `nil` for a request that does
    /// not change the store.
    func storeWrite(for request: Request, access: ConnectionAccess) -> StoreWrite? {
        let actor = access.actor
        switch request {
        case .grant(let grant, let reason):
            return grantWrite(grant, reason: reason, access: access)
        case .claim(let device, let user, let reason):
            return .claim(device: device, user: user, author: ChangeAuthor(actor: actor, reason: reason))
        case .revoke(let id, let reason):
            return .revoke(id, reason: reason, actor: actor)
        case .define(let entitlement, let products, let reason):
            return .define(entitlement: entitlement, products: products, author: ChangeAuthor(actor: actor, reason: reason))
        case .undefine(let entitlement, let reason):
            return .undefine(entitlement: entitlement, author: ChangeAuthor(actor: actor, reason: reason))
        case .event(let id, let event, let reason):
            return .event(event, membership: id, author: ChangeAuthor(actor: actor, reason: reason))
        case .erase(let subject, let reason):
            return .erase(subject, author: ChangeAuthor(actor: actor, reason: reason))
        case .extend(let id, let extensionAsked, let reason):
            return .extend(id, extensionAsked, author: ChangeAuthor(actor: actor, reason: reason))
        case .ping, .hello, .check, .memberships, .catalog, .snapshot, .customer, .history, .watch, .unwatch, .auth, .stats, .reload,
            .changes, .export:
            return nil
        }
    }

    /// The store's write for a grant by the connection with `access`.
    @inline(__always)
    func grantWrite(_ grant: Grant, reason: String?, access: ConnectionAccess) -> StoreWrite {
        .grant(grant, author: ChangeAuthor(actor: access.actor, reason: reason), transfers: transferRule)
    }

    /// The answer to `write`, whose result is `result`, at `now`.
    ///
    /// `now` is read only for the answers that need it: a new membership is described as of its creation,
    /// and a clock read (a virtual machine's especially) costs as much as a hash lookup. An imported
    /// purchase (`purchasedAt`) was created in the past: it is described as it is now, which may be expired.
    static func response(to write: StoreWrite, result: WriteResult, now: () -> Timestamp) -> Response {
        switch result {
        case .granted(let membership, let isReplay, let formerOwner):
            if isReplay { return .replayedGrant(membership, moment: now()) }
            if let formerOwner { return .transferredGrant(membership, moment: now(), from: formerOwner) }
            if case .grant(let grant, _, _) = write, grant.purchasedAt != nil { return .membership(membership, moment: now()) }
            return .membership(membership, moment: membership.createdAt)
        case .claimed(let memberships):
            return .claimed(memberships.count)
        case .revoked(let membership, _):
            return .membership(membership, moment: now())
        case .extended(let membership, let previousExpiresAt):
            return .extended(membership, moment: now(), previousExpiresAt: previousExpiresAt)
        case .defined(let products):
            guard case .define(let entitlement, _, _) = write else { preconditionFailure("a definition answers a define") }
            return .defined(entitlement: entitlement, products: products)
        case .undefined(let products):
            guard case .undefine(let entitlement, _) = write else { preconditionFailure("a removal answers an undefine") }
            return .undefined(entitlement: entitlement, products: products)
        case .eventApplied(let membership, let outcome):
            return .event(membership, moment: now(), outcome: outcome)
        case .erased(let erasure):
            return .erased(memberships: erasure.memberships.count, historyEntries: erasure.historyEntries)
        }
    }

    /// Writes the answer line of `write` given what became of it; returns its error code, if it failed.
    @discardableResult
    static func writeAnswer(
        to write: WriteRequest, _ result: Result<AppliedWrite, WriteFailure>, now: @autoclosure () -> Timestamp, into output: inout ByteBuffer
    ) -> ErrorCode? {
        switch result {
        case .success(let applied):
            ResponseEncoder.write(response(to: write.write, result: applied.result, now: now), id: write.id, sequence: applied.sequence, into: &output)
            return nil
        case .failure(let failure):
            let error = wireError(failure)
            ResponseEncoder.write(error, id: write.id, into: &output)
            return error.code
        }
    }

    /// The answer to a write that was not acknowledged: the store's refusal, `unavailable` when it was
    /// certainly not made, `outcome_unknown` when it may have been.
    static func wireError(_ failure: WriteFailure) -> WireError {
        if let refusal = failure.refusal { return wireError(refusal) }
        switch failure.outcome {
        case .notMade:
            return WireError(.unavailable, "the write was not made: \(failure.reason); nothing was changed")
        case .unknown:
            return WireError(
                .outcomeUnknown,
                "the write may or may not have been made: \(failure.reason); retry it with the same idempotencyKey (a replay answers idempotentReplay), or read to find out"
            )
        }
    }
}
