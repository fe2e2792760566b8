import EntitledCore

// The binary forms format version 2 added (Protocol/STORAGE.md §4): a membership's lifecycle, lifecycle
// events, the audit context of a change, and revisions. Enumerations are stored by their protocol names
// (strings), so that a reader in another language needs no table of codes.
//
//   lifecycle: willRenew: u8, periodType: string, renewsCount: u32, unsubscribeDetectedAt: time?,
//     billingIssueDetectedAt: time?, gracePeriodExpiresAt: time?, pausedAt: time?, environment: string,
//     ownership: string, grantType: string, u32 count × transaction, newestEventTime: time?,
//     u32 count × appliedEventID: string
//   transaction: id: string, originalTransactionId: string, type: string, time: time, expiresAt: time?,
//     revokedAt: time?
//   event: id: string, time: time, type: string, transactionId: string?, then by type:
//     renewal, extension: expiresAt: time; billing_issue: gracePeriodExpiresAt: time?;
//     resume: expiresAt: time?; product_change: productId: string; the others: nothing
//   context: recordedAt: time, actor: string, reason: string?
//   revision: sequence: u64, context, action: u8 (1 grant, 2 claim, 3 revoke, 4 event, then an event),
//     effectiveAt: time, before: u8 presence, then a membership

extension BinaryWriting {
    mutating func write(_ lifecycle: MembershipLifecycle) {
        write(UInt8(lifecycle.willRenew ? 1 : 0))
        write(lifecycle.periodType.rawValue)
        write(UInt32(clamping: lifecycle.renewsCount))
        write(lifecycle.unsubscribeDetectedAt)
        write(lifecycle.billingIssueDetectedAt)
        write(lifecycle.gracePeriodExpiresAt)
        write(lifecycle.pausedAt)
        write(lifecycle.environment.rawValue)
        write(lifecycle.ownership.rawValue)
        write(lifecycle.grantType.rawValue)
        write(UInt32(lifecycle.transactions.count))
        for transaction in lifecycle.transactions {
            write(transaction.id)
            write(transaction.originalTransactionId)
            write(transaction.type)
            write(transaction.time.millisecondsSinceEpoch)
            write(transaction.expiresAt)
            write(transaction.revokedAt)
        }
        write(lifecycle.newestEventTime)
        write(UInt32(lifecycle.appliedEventIDs.count))
        for id in lifecycle.appliedEventIDs { write(id) }
    }

    mutating func write(_ event: LifecycleEvent) {
        write(event.id)
        write(event.time.millisecondsSinceEpoch)
        write(event.kind.name)
        write(event.transactionId)
        switch event.kind {
        case .renewal(let expiresAt), .extension(let expiresAt):
            write(expiresAt.millisecondsSinceEpoch)
        case .billingIssue(let gracePeriodExpiresAt):
            write(gracePeriodExpiresAt)
        case .resume(let expiresAt):
            write(expiresAt)
        case .productChange(let productId):
            write(productId)
        case .cancellation, .uncancellation, .billingRecovered, .expiration, .pause, .refund, .refundReversal:
            break
        }
    }

    mutating func write(_ context: ChangeContext) {
        write(context.recordedAt.millisecondsSinceEpoch)
        write(context.actor)
        write(context.reason)
    }

    mutating func write(_ revision: MembershipRevision) {
        write(revision.sequence)
        write(revision.context)
        switch revision.action {
        case .grant: write(UInt8(1))
        case .claim: write(UInt8(2))
        case .revoke: write(UInt8(3))
        case .event(let event):
            write(UInt8(4))
            write(event)
        case .transfer:
            write(UInt8(5))  // from format version 4
        case .extend(let previousExpiresAt):
            write(UInt8(6))  // from format version 5
            write(previousExpiresAt.millisecondsSinceEpoch)
        }
        write(revision.effectiveAt.millisecondsSinceEpoch)
        if let before = revision.before {
            write(UInt8(1))
            write(before)
        } else {
            write(UInt8(0))
        }
    }
}

extension BinaryReader {
    mutating func readLifecycle() throws(Malformed) -> MembershipLifecycle {
        var lifecycle = MembershipLifecycle()
        lifecycle.willRenew = try readBool()
        lifecycle.periodType = try readName(PeriodType.self)
        lifecycle.renewsCount = Int(try readUInt32())
        lifecycle.unsubscribeDetectedAt = try readOptionalTimestamp()
        lifecycle.billingIssueDetectedAt = try readOptionalTimestamp()
        lifecycle.gracePeriodExpiresAt = try readOptionalTimestamp()
        lifecycle.pausedAt = try readOptionalTimestamp()
        lifecycle.environment = try readName(PurchaseEnvironment.self)
        lifecycle.ownership = try readName(Ownership.self)
        lifecycle.grantType = try readName(GrantType.self)
        // The smallest transaction: three empty strings (12), a time (8), two absent times (2).
        for _ in 0..<(try readCount(minimumBytesEach: 22)) {
            lifecycle.transactions.append(
                PurchaseTransaction(
                    id: try readString(), originalTransactionId: try readString(), type: try readString(),
                    time: Timestamp(millisecondsSinceEpoch: try readInt64()), expiresAt: try readOptionalTimestamp(),
                    revokedAt: try readOptionalTimestamp()
                )
            )
        }
        lifecycle.newestEventTime = try readOptionalTimestamp()
        for _ in 0..<(try readCount(minimumBytesEach: 4)) { lifecycle.appliedEventIDs.append(try readString()) }
        return lifecycle
    }

    /// An event of a record or revision in format `version`: `refund_reversal` exists from version 6 on, so an
    /// older file that holds one is damaged, not a newer one.
    mutating func readLifecycleEvent(version: UInt32) throws(Malformed) -> LifecycleEvent {
        let id = try readString()
        let time = Timestamp(millisecondsSinceEpoch: try readInt64())
        let typeOffset = offset
        let type = try readString()
        let transactionId = try readOptionalString()
        guard let name = LifecycleEvent.Kind.Name(rawValue: type), name != .refundReversal || version >= 6 else {
            throw Malformed(offset: typeOffset, problem: "unknown event type \"\(type)\"")
        }
        let kind: LifecycleEvent.Kind
        switch name {
        case .renewal: kind = .renewal(expiresAt: Timestamp(millisecondsSinceEpoch: try readInt64()))
        case .extension: kind = .extension(expiresAt: Timestamp(millisecondsSinceEpoch: try readInt64()))
        case .billingIssue: kind = .billingIssue(gracePeriodExpiresAt: try readOptionalTimestamp())
        case .resume: kind = .resume(expiresAt: try readOptionalTimestamp())
        case .productChange: kind = .productChange(productId: try readString())
        case .cancellation: kind = .cancellation
        case .uncancellation: kind = .uncancellation
        case .billingRecovered: kind = .billingRecovered
        case .expiration: kind = .expiration
        case .pause: kind = .pause
        case .refund: kind = .refund
        case .refundReversal: kind = .refundReversal
        }
        return LifecycleEvent(id: id, time: time, kind: kind, transactionId: transactionId)
    }

    mutating func readChangeContext() throws(Malformed) -> ChangeContext {
        let recordedAt = Timestamp(millisecondsSinceEpoch: try readInt64())
        return ChangeContext(actor: try readString(), reason: try readOptionalString(), recordedAt: recordedAt)
    }

    /// A revision of a snapshot in format `version`: transfers (5) from version 4 on, extensions (6) from 5.
    mutating func readRevision(version: UInt32) throws(Malformed) -> MembershipRevision {
        let sequence = try readUInt64()
        let context = try readChangeContext()
        let actionOffset = offset
        let action: MembershipRevision.Action
        switch try readUInt8() {
        case 1: action = .grant
        case 2: action = .claim
        case 3: action = .revoke
        case 4: action = .event(try readLifecycleEvent(version: version))
        case 5 where version >= 4: action = .transfer
        case 6 where version >= 5: action = .extend(previousExpiresAt: Timestamp(millisecondsSinceEpoch: try readInt64()))
        case let code: throw Malformed(offset: actionOffset, problem: "unknown revision action \(code)")
        }
        let effectiveAt = Timestamp(millisecondsSinceEpoch: try readInt64())
        let before = try readBool() ? try readMembership(version: 2) : nil
        return MembershipRevision(sequence: sequence, context: context, action: action, effectiveAt: effectiveAt, before: before)
    }

    /// A presence or boolean byte: 0 or 1.
    mutating func readBool() throws(Malformed) -> Bool {
        switch try readUInt8() {
        case 0: return false
        case 1: return true
        case let flag: throw Malformed(offset: offset - 1, problem: "a presence byte is \(flag), not 0 or 1")
        }
    }

    /// An enumeration stored by its protocol name.
    mutating func readName<Name: RawRepresentable<String>>(_ type: Name.Type) throws(Malformed) -> Name {
        let start = offset
        let name = try readString()
        guard let value = Name(rawValue: name) else { throw Malformed(offset: start, problem: "unknown \(Name.self) \"\(name)\"") }
        return value
    }

    /// A u32 count of items of at least `minimumBytesEach` bytes, checked against the bytes left, so a
    /// corrupt count cannot make a reader reserve or loop for billions of items.
    mutating func readCount(minimumBytesEach: Int) throws(Malformed) -> Int {
        let count = Int(try readUInt32())
        guard count <= remaining / max(1, minimumBytesEach) else { throw Malformed(offset: offset - 4, problem: "a count of \(count) is more than the bytes left hold") }
        return count
    }
}
