#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The request fields the protocol defines. Any other key in a request is skipped (after validating its
/// value as JSON), so clients may send fields a newer server will understand.
enum RequestField: Int, CaseIterable {
    case op, id, user, device, product, entitlement, plan, source, expiresAt, duration, at, membership, reason,
        products

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
        }
    }

    var description: String { name.description }

    /// The field whose name is exactly these bytes (compared without building a String).
    static func matching(_ key: UnsafeRawBufferPointer) -> RequestField? {
        guard let keyStart = key.baseAddress, !key.isEmpty else { return nil }
        for field in allCases {
            let name = field.name
            if name.utf8CodeUnitCount == key.count, memcmp(name.utf8Start, keyStart, key.count) == 0 {
                return field
            }
        }
        return nil
    }
}
