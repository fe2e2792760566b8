import EntitledCore
import NIOCore

// The objects of the `customer` and `history` answers: admin and SDK-backend views, off the hot path,
// written with plain `ByteBuffer` writes.

extension ResponseEncoder {
    /// `{"entitlements":{...},"activeProducts":[...],"allPurchasedProductIds":[...],
    /// "latestExpirationDate":T,"firstSeen":T,"requestDate":T}`
    static func write(_ info: CustomerInfo, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{\"entitlements\":{")
        for (index, (name, entitlement)) in info.entitlements.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeJSONString(name)
            buffer.writeStaticString(":{\"isActive\":")
            buffer.writeStaticString(entitlement.isActive ? "true" : "false")
            buffer.writeStaticString(",\"productId\":")
            buffer.writeJSONString(entitlement.productId)
            buffer.writeStaticString(",\"membership\":")
            buffer.writeJSONString(entitlement.membershipId.rawValue)
            buffer.writeStaticString(",\"expiresAt\":")
            buffer.writeJSONTimestamp(entitlement.expiresAt)
            buffer.writeStaticString(",\"willRenew\":")
            buffer.writeStaticString(entitlement.willRenew ? "true" : "false")
            buffer.writeStaticString(",\"periodType\":")
            buffer.writeJSONString(entitlement.periodType.rawValue)
            buffer.writeStaticString(",\"store\":")
            buffer.writeJSONString(entitlement.store.rawValue)
            buffer.writeStaticString(",\"latestPurchaseDate\":")
            buffer.writeJSONTimestamp(entitlement.latestPurchaseDate)
            buffer.writeStaticString(",\"originalPurchaseDate\":")
            buffer.writeJSONTimestamp(entitlement.originalPurchaseDate)
            buffer.writeStaticString(",\"billingIssueDetectedAt\":")
            buffer.writeJSONTimestamp(entitlement.billingIssueDetectedAt)
            buffer.writeStaticString(",\"unsubscribeDetectedAt\":")
            buffer.writeJSONTimestamp(entitlement.unsubscribeDetectedAt)
            buffer.writeStaticString("}")
        }
        buffer.writeStaticString("},\"activeProducts\":")
        writeStrings(info.activeProducts, into: &buffer)
        buffer.writeStaticString(",\"allPurchasedProductIds\":")
        writeStrings(info.allPurchasedProductIds, into: &buffer)
        buffer.writeStaticString(",\"latestExpirationDate\":")
        buffer.writeJSONTimestamp(info.latestExpirationDate)
        buffer.writeStaticString(",\"firstSeen\":")
        buffer.writeJSONTimestamp(info.firstSeen)
        buffer.writeStaticString(",\"requestDate\":")
        buffer.writeJSONTimestamp(info.requestDate)
        buffer.writeStaticString("}")
    }

    /// `{"time":T,"actor":A,"action":N[,"reason":R][,"sequence":S], ...what changed}`: for a membership,
    /// `membership` (its object as the change left it, status as of the change) and, for an event,
    /// `eventId` and `eventTime`, for an extension, `previousExpiresAt`; for the catalog, `entitlement` and `products`.
    static func write(_ entry: AuditEntry, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{")
        writeFields(of: entry, into: &buffer)
        buffer.writeStaticString("}")
    }

    /// An item of the change feed: its change's audit entry, and for a transfer `formerOwner`
    /// (`{"user":U}` or `{"device":D}`), for an erasure `erasedMemberships` and `detachedMemberships`.
    static func write(_ item: FeedItem, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{")
        writeFields(of: item.entry, into: &buffer)
        if let owner = item.formerOwner {
            buffer.writeStaticString(",\"formerOwner\":{")
            if let user = owner.user {
                buffer.writeStaticString("\"user\":")
                buffer.writeJSONString(user)
            } else if let device = owner.device {
                buffer.writeStaticString("\"device\":")
                buffer.writeJSONString(device)
            }
            buffer.writeStaticString("}")
        }
        if case .erasure = item.entry.change {
            buffer.writeStaticString(",\"erasedMemberships\":")
            writeStrings(item.erasedMemberships.map(\.rawValue), into: &buffer)
            buffer.writeStaticString(",\"detachedMemberships\":")
            writeStrings(item.detachedMemberships.map(\.rawValue), into: &buffer)
        }
        buffer.writeStaticString("}")
    }

    /// The fields of an audit entry, without its braces.
    private static func writeFields(of entry: AuditEntry, into buffer: inout ByteBuffer) {
        buffer.writeStaticString("\"time\":")
        buffer.writeJSONTimestamp(entry.context.recordedAt)
        buffer.writeStaticString(",\"actor\":")
        buffer.writeJSONString(entry.context.actor)
        buffer.writeStaticString(",\"action\":")
        buffer.writeJSONString(entry.actionName)
        if let reason = entry.context.reason {
            buffer.writeStaticString(",\"reason\":")
            buffer.writeJSONString(reason)
        }
        if let sequence = entry.sequence {
            buffer.writeStaticString(",\"sequence\":")
            buffer.writeJSONInteger(sequence)
        }
        switch entry.change {
        case .membership(let action, let after):
            if case .event(let event) = action {
                buffer.writeStaticString(",\"eventId\":")
                buffer.writeJSONString(event.id)
                buffer.writeStaticString(",\"eventTime\":")
                buffer.writeJSONTimestamp(event.time)
            }
            if case .extend(let previousExpiresAt) = action {
                buffer.writeStaticString(",\"previousExpiresAt\":")
                buffer.writeJSONTimestamp(previousExpiresAt)
            }
            buffer.writeStaticString(",\"membership\":")
            write(after, at: entry.context.recordedAt, into: &buffer)
        case .catalog(let entitlement, let products), .catalogRemoval(let entitlement, let products):
            buffer.writeStaticString(",\"entitlement\":")
            buffer.writeJSONString(entitlement)
            buffer.writeStaticString(",\"products\":")
            writeStrings(products, into: &buffer)
        case .erasure(let memberships, let historyEntries):
            writeErased(memberships: memberships, historyEntries: historyEntries, into: &buffer)
        }
    }
}

extension ResponseEncoder {
    /// A pushed line: `{"push":"access","cause":C[,"sequence":N],"membership":{...}}`. `push` is the field
    /// responses never have (they all have `ok`), so a client tells the two apart by one key. `sequence`
    /// is the number of the change (none for an expiry, which is not a change).
    public static func writePush(
        cause: String, membership: Membership, at moment: Timestamp, sequence: UInt64?, into buffer: inout ByteBuffer
    ) {
        buffer.writeStaticString("{\"push\":\"access\",\"cause\":")
        buffer.writeJSONString(cause)
        if let sequence {
            buffer.writeStaticString(",\"sequence\":")
            buffer.writeJSONInteger(sequence)
        }
        buffer.writeStaticString(",\"membership\":")
        write(membership, at: moment, into: &buffer)
        buffer.writeStaticString("}\n")
    }
}
