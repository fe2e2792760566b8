import EntitledCore

// The payload of a log record (Protocol/STORAGE.md): sequence: u64, kind: u8, then the kind's fields.
//   1 create: membership
//   2 claim:  device: string, user: string
//   3 revoke: membership id: string, revokedAt: i64, reason: string
//   4 define: entitlement: string, count: u32, products: string × count

/// A change as the log holds it: its number and what it did.
struct LoggedChange: Hashable {
    var sequence: UInt64
    var change: StoreChange
}

extension BinaryWriter {
    mutating func write(_ logged: LoggedChange) {
        write(logged.sequence)
        switch logged.change {
        case .create(let membership):
            write(UInt8(1))
            write(membership)
        case .claim(let device, let user):
            write(UInt8(2))
            write(device)
            write(user)
        case .revoke(let id, let revocation):
            write(UInt8(3))
            write(id)
            write(revocation.revokedAt.millisecondsSinceEpoch)
            write(revocation.reason)
        case .define(let entitlement, let products):
            write(UInt8(4))
            write(entitlement)
            write(UInt32(products.count))
            for product in products { write(product) }
        }
    }
}

extension BinaryReader {
    mutating func readLoggedChange() throws(Malformed) -> LoggedChange {
        let sequence = try readUInt64()
        let kindOffset = offset
        let change: StoreChange
        switch try readUInt8() {
        case 1:
            change = .create(try readMembership())
        case 2:
            change = .claim(device: try readString(), user: try readString())
        case 3:
            let id = MembershipID(rawValue: try readString())
            let revokedAt = Timestamp(millisecondsSinceEpoch: try readInt64())
            change = .revoke(id, Revocation(revokedAt: revokedAt, reason: try readString()))
        case 4:
            let entitlement = try readString()
            let count = try readUInt32()
            guard Int(count) <= remaining / 4 else { throw Malformed(offset: offset - 4, problem: "too many products") }
            var products: [String] = []
            products.reserveCapacity(Int(count))
            for _ in 0..<count { products.append(try readString()) }
            change = .define(entitlement: entitlement, products: products)
        case let kind:
            throw Malformed(offset: kindOffset, problem: "unknown change kind \(kind)")
        }
        guard remaining == 0 else { throw Malformed(offset: offset, problem: "\(remaining) bytes left after the change") }
        return LoggedChange(sequence: sequence, change: change)
    }
}
