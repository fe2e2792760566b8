#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The request fields the protocol defines. A request with any other key, or with a field its operation
/// does not use (`Request.Operation.acceptedFields`), is refused: a misspelt field must never change what
/// a request means.
enum RequestField: Int, CaseIterable {
    case op, id, user, device, product, entitlement, plan, source, expiresAt, duration, at, membership, reason,
        products, type, eventId, eventTime, gracePeriodExpiresAt, transactionId, originalTransactionId, willRenew,
        periodType, environment, ownership, grantType, idempotencyKey, all, limit, token, erasures, minSeq, after,
        purchasedAt, renewsCount, endedAfter, afterSeq, wait, history
    // At most 64 fields: `RequestFields` notes the fields it saw in a 64-bit mask (32 bits until the 33rd).

    var name: StaticString {
        switch self {
        case .op: return "op"
        case .id: return "id"
        case .user: return "user"
        case .device: return "device"
        case .product: return "product"
        case .entitlement: return "entitlement"
        case .plan: return "plan"
        case .source: return "source"
        case .expiresAt: return "expiresAt"
        case .duration: return "duration"
        case .at: return "at"
        case .membership: return "membership"
        case .reason: return "reason"
        case .products: return "products"
        case .type: return "type"
        case .eventId: return "eventId"
        case .eventTime: return "eventTime"
        case .gracePeriodExpiresAt: return "gracePeriodExpiresAt"
        case .transactionId: return "transactionId"
        case .originalTransactionId: return "originalTransactionId"
        case .willRenew: return "willRenew"
        case .periodType: return "periodType"
        case .environment: return "environment"
        case .ownership: return "ownership"
        case .grantType: return "grantType"
        case .idempotencyKey: return "idempotencyKey"
        case .all: return "all"
        case .limit: return "limit"
        case .token: return "token"
        case .erasures: return "erasures"
        case .minSeq: return "minSeq"
        case .after: return "after"
        case .purchasedAt: return "purchasedAt"
        case .renewsCount: return "renewsCount"
        case .endedAfter: return "endedAfter"
        case .afterSeq: return "afterSeq"
        case .wait: return "wait"
        case .history: return "history"
        }
    }

    var description: String { name.description }

    /// This field's bit in a 64-bit field mask (`RequestFields.seen`, `Request.Operation.acceptedFields`).
    @inline(__always)
    var bit: UInt64 { UInt64(1) << UInt64(rawValue) }

    /// The field whose name is exactly these bytes (compared without building a String).
    ///
    /// Length and first byte pick the one candidate, then one comparison confirms it: a linear search
    /// through every name cost about 160 instructions a key in callgrind, three keys a check.
    /// `RequestFieldMatchingTests` proves the table agrees with `name` for every field.
    static func matching(_ key: UnsafeRawBufferPointer) -> RequestField? {
        guard key.count >= 2 else { return nil }
        let candidate: RequestField
        switch (key.count, key[0]) {
        case (2, UInt8(ascii: "o")): candidate = .op
        case (2, UInt8(ascii: "i")): candidate = .id
        case (2, UInt8(ascii: "a")): candidate = .at
        case (4, UInt8(ascii: "u")): candidate = .user
        case (4, UInt8(ascii: "p")): candidate = .plan
        case (6, UInt8(ascii: "d")): candidate = .device
        case (6, UInt8(ascii: "s")): candidate = .source
        case (6, UInt8(ascii: "r")): candidate = .reason
        case (6, UInt8(ascii: "m")): candidate = .minSeq
        case (7, UInt8(ascii: "p")): candidate = .product
        case (8, UInt8(ascii: "d")): candidate = .duration
        case (8, UInt8(ascii: "p")): candidate = .products
        case (8, UInt8(ascii: "e")): candidate = .erasures
        case (9, UInt8(ascii: "e")): candidate = key[1] == UInt8(ascii: "x") ? .expiresAt : .eventTime
        case (10, UInt8(ascii: "m")): candidate = .membership
        case (10, UInt8(ascii: "e")): candidate = .endedAfter
        case (11, UInt8(ascii: "p")): candidate = .purchasedAt
        case (11, UInt8(ascii: "r")): candidate = .renewsCount
        case (11, UInt8(ascii: "e")): candidate = key[2] == UInt8(ascii: "t") ? .entitlement : .environment
        case (3, UInt8(ascii: "a")): candidate = .all
        case (4, UInt8(ascii: "t")): candidate = .type
        case (5, UInt8(ascii: "l")): candidate = .limit
        case (8, UInt8(ascii: "a")): candidate = .afterSeq
        case (4, UInt8(ascii: "w")): candidate = .wait
        case (7, UInt8(ascii: "h")): candidate = .history
        case (5, UInt8(ascii: "a")): candidate = .after
        case (5, UInt8(ascii: "t")): candidate = .token
        case (7, UInt8(ascii: "e")): candidate = .eventId
        case (9, UInt8(ascii: "w")): candidate = .willRenew
        case (9, UInt8(ascii: "o")): candidate = .ownership
        case (9, UInt8(ascii: "g")): candidate = .grantType
        case (10, UInt8(ascii: "p")): candidate = .periodType
        case (13, UInt8(ascii: "t")): candidate = .transactionId
        case (14, UInt8(ascii: "i")): candidate = .idempotencyKey
        case (20, UInt8(ascii: "g")): candidate = .gracePeriodExpiresAt
        case (21, UInt8(ascii: "o")): candidate = .originalTransactionId
        default: return nil
        }
        return candidate.name.isSpelled(by: key) ? candidate : nil
    }
}

extension StaticString {
    /// Whether `bytes` are exactly this string's UTF-8.
    @inline(__always)
    func isSpelled(by bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress, utf8CodeUnitCount == bytes.count else { return false }
        return memcmp(utf8Start, start, bytes.count) == 0
    }
}
