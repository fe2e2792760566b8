import EntitledCore

// The binary form of a membership, shared by log records and snapshots (Protocol/STORAGE.md):
//   id: string, productId: string, planId: string?, device: string?, user: string?,
//   createdAt: i64, expiresAt: time?, source: u8, revocation: u8 presence, then revokedAt: i64, reason: string
// and from format version 2 on:
//   lifecycle: u8 presence (0: the standard lifecycle), then a lifecycle (Lifecycle+Binary.swift)

extension PurchaseSource {
    /// The byte each source is stored as. Never renumbered: files written by earlier versions use them.
    var storageCode: UInt8 {
        switch self {
        case .appStore: return 1
        case .playStore: return 2
        case .stripe: return 3
        case .whop: return 4
        case .manual: return 5
        case .promotional: return 6
        }
    }

    init?(storageCode: UInt8) {
        guard let source = PurchaseSource.allCases.first(where: { $0.storageCode == storageCode }) else { return nil }
        self = source
    }
}

extension BinaryWriting {
    /// Writes `membership` in the current format version (2).
    mutating func write(_ membership: Membership) {
        write(membership.id)
        write(membership.productId)
        write(membership.planId)
        write(membership.device)
        write(membership.user)
        write(membership.createdAt.millisecondsSinceEpoch)
        write(membership.expiresAt)
        write(membership.source.storageCode)
        if let revocation = membership.revocation {
            write(UInt8(1))
            write(revocation.revokedAt.millisecondsSinceEpoch)
            write(revocation.reason)
        } else {
            write(UInt8(0))
        }
        if membership.hasLifecycle {
            write(UInt8(1))
            write(membership.lifecycle)
        } else {
            write(UInt8(0))
        }
    }
}

extension BinaryReader {
    /// Reads a membership written in format `version` (1 to 3; versions 2 and 3 lay it out alike).
    mutating func readMembership(version: UInt32) throws(Malformed) -> Membership {
        let idOffset = offset
        let id = MembershipID(rawValue: try readString())
        guard id.bits != nil else { throw Malformed(offset: idOffset, problem: "\(id) is not a membership id") }
        let productId = try readString()
        let planId = try readOptionalString()
        let device = try readOptionalString()
        let user = try readOptionalString()
        let createdAt = Timestamp(millisecondsSinceEpoch: try readInt64())
        let expiresAt = try readOptionalTimestamp()
        let sourceOffset = offset
        guard let source = PurchaseSource(storageCode: try readUInt8()) else {
            throw Malformed(offset: sourceOffset, problem: "unknown source code")
        }
        var revocation: Revocation?
        switch try readUInt8() {
        case 0: break
        case 1: revocation = Revocation(revokedAt: Timestamp(millisecondsSinceEpoch: try readInt64()), reason: try readString())
        case let flag: throw Malformed(offset: offset - 1, problem: "a presence byte is \(flag), not 0 or 1")
        }
        var lifecycle = MembershipLifecycle.standard
        if version >= 2, try readBool() { lifecycle = try readLifecycle() }
        return Membership(
            id: id, productId: productId, planId: planId, device: device, user: user,
            createdAt: createdAt, expiresAt: expiresAt, source: source, revocation: revocation, lifecycle: lifecycle
        )
    }
}

extension BinaryReader {
    /// Moves past a membership written in format `version` without building it: how a snapshot finds
    /// where each block of memberships starts, so that the blocks can be decoded on several cores. Checks
    /// only what it must to find the end; `readMembership` checks the rest when the block is decoded.
    mutating func skipMembership(version: UInt32) throws(Malformed) {
        try skipString()  // id
        try skipString()  // productId
        if try readBool() { try skipString() }  // planId
        if try readBool() { try skipString() }  // device
        if try readBool() { try skipString() }  // user
        try skip(8)  // createdAt
        if try readBool() { try skip(8) }  // expiresAt
        try skip(1)  // source
        if try readBool() {  // revocation
            try skip(8)
            try skipString()
        }
        if version >= 2, try readBool() { _ = try readLifecycle() }
    }
}

