import EntitledCore

// The payload of a log record (Protocol/STORAGE.md §4).
//
// Format version 5: sequence: u64, kind: u8, context (recordedAt: time, actor: string, reason: string?),
// then the kind's fields:
//   1 create: membership, idempotencyKey: string?
//   2 claim:  device: string, user: string
//   3 revoke: membership id: string, revokedAt: i64, reason: string
//   4 define: entitlement: string, count: u32, products: string × count
//   5 event:  event, result: membership
//   6 undefine: entitlement: string                      (from version 3)
//   7 erase:  user: string?, device: string?              (from version 3)
//   8 transfer: membership id: string, user: string       (from version 4)
//   9 extend: membership id: string, expiresAt: i64        (from version 5)
// Format version 4 (still read): the same without kind 9; version 3 also without kind 8; version 2 also
// without kinds 6 and 7.
// Format version 1 (still read): sequence: u64, kind: u8 (1 to 4), then the kind's fields, with no
// context, no idempotency key, and version 1 memberships.

/// A change as the log holds it: its number, what it did, and who did it when and why.
struct LoggedChange: Hashable {
    var sequence: UInt64
    var change: StoreChange
    var context: ChangeContext
}

extension BinaryWriting {
    /// Writes `logged` in the current format version (5).
    mutating func write(_ logged: LoggedChange) {
        writeChange(logged.change, sequence: logged.sequence, context: logged.context)
    }

    /// Writes change `sequence` in the current format version (5), as `write(_: LoggedChange)`: the log
    /// writer's form, which builds no `LoggedChange` (a copy of the change, retaining each of its strings
    /// and releasing them again, on every write).
    mutating func writeChange(_ change: StoreChange, sequence: UInt64, context: ChangeContext) {
        write(sequence)
        let kind: UInt8
        switch change {
        case .create: kind = 1
        case .claim: kind = 2
        case .revoke: kind = 3
        case .define: kind = 4
        case .event: kind = 5
        case .undefine: kind = 6
        case .erase: kind = 7
        case .transfer: kind = 8
        case .extend: kind = 9
        }
        write(kind)
        write(context)
        switch change {
        case .create(let membership, let idempotencyKey):
            write(membership)
            write(idempotencyKey)
        case .claim(let device, let user):
            write(device)
            write(user)
        case .revoke(let id, let revocation):
            write(id)
            write(revocation.revokedAt.millisecondsSinceEpoch)
            write(revocation.reason)
        case .define(let entitlement, let products):
            write(entitlement)
            write(UInt32(products.count))
            for product in products { write(product) }
        case .event(let event, let result):
            write(event)
            write(result)
        case .undefine(let entitlement):
            write(entitlement)
        case .erase(let user, let device):
            write(user)
            write(device)
        case .transfer(let id, let user):
            write(id)
            write(user)
        case .extend(let id, let expiresAt):
            write(id)
            write(expiresAt.millisecondsSinceEpoch)
        }
    }
}

extension BinaryReader {
    /// Reads a record payload written in format `version` (1 to 5).
    ///
    /// - Parameter undatedTime: the time given to a version 1 claim or define, which recorded none (the
    ///   caller passes the newest time it has seen before the record).
    mutating func readLoggedChange(version: UInt32, undatedTime: Timestamp = Timestamp(millisecondsSinceEpoch: 0)) throws(Malformed) -> LoggedChange {
        let sequence = try readUInt64()
        let kindOffset = offset
        let kind = try readUInt8()
        let storedContext = version >= 2 ? try readChangeContext() : nil
        let change: StoreChange
        var context = storedContext ?? ChangeContext(recordedAt: undatedTime)
        switch kind {
        case 1:
            let membership = try readMembership(version: version)
            change = .create(membership, idempotencyKey: version >= 2 ? try readOptionalString() : nil)
            if storedContext == nil { context.recordedAt = membership.createdAt }
        case 2:
            change = .claim(device: try readString(), user: try readString())
        case 3:
            let id = MembershipID(rawValue: try readString())
            let revokedAt = Timestamp(millisecondsSinceEpoch: try readInt64())
            let revocation = Revocation(revokedAt: revokedAt, reason: try readString())
            change = .revoke(id, revocation)
            if storedContext == nil { context = ChangeContext(reason: revocation.reason, recordedAt: revokedAt) }
        case 4:
            let entitlement = try readString()
            let count = try readUInt32()
            guard Int(count) <= remaining / 4 else { throw Malformed(offset: offset - 4, problem: "too many products") }
            var products: [String] = []
            products.reserveCapacity(Int(count))
            for _ in 0..<count { products.append(try readString()) }
            change = .define(entitlement: entitlement, products: products)
        case 5 where version >= 2:
            let event = try readLifecycleEvent(version: version)
            change = .event(event, result: try readMembership(version: version))
        case 6 where version >= 3:
            change = .undefine(entitlement: try readString())
        case 7 where version >= 3:
            let user = try readOptionalString()
            let device = try readOptionalString()
            guard user != nil || device != nil else { throw Malformed(offset: kindOffset, problem: "an erase names neither a user nor a device") }
            change = .erase(user: user, device: device)
        case 8 where version >= 4:
            change = .transfer(MembershipID(rawValue: try readString()), toUser: try readString())
        case 9 where version >= 5:
            change = .extend(MembershipID(rawValue: try readString()), expiresAt: Timestamp(millisecondsSinceEpoch: try readInt64()))
        default:
            throw Malformed(offset: kindOffset, problem: "unknown change kind \(kind)")
        }
        guard remaining == 0 else { throw Malformed(offset: offset, problem: "\(remaining) bytes left after the change") }
        return LoggedChange(sequence: sequence, change: change, context: context)
    }
}
