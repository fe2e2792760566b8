/// Typed constructors for every operation of the protocol (Protocol/PROTOCOL.md, section 6).
extension EntitledRequest {
    public static let ping = EntitledRequest(op: "ping")
    public static let catalog = EntitledRequest(op: "catalog")
    public static let snapshot = EntitledRequest(op: "snapshot")

    /// Whether the subject (a user, a device or both) has access, to one product, one entitlement or any.
    public static func check(
        user: String? = nil, device: String? = nil, product: String? = nil, entitlement: String? = nil, at: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(op: "check", ["user": user, "device": device, "product": product, "entitlement": entitlement, "at": at])
    }

    /// Creates a membership. Give `expiresAt` (an RFC 3339 time) or `duration` (`"30d"`), or neither for lifetime.
    public static func grant(
        user: String? = nil, device: String? = nil, product: String, plan: String? = nil, source: String? = nil,
        expiresAt: String? = nil, duration: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "grant",
            [
                "user": user, "device": device, "product": product, "plan": plan, "source": source,
                "expiresAt": expiresAt, "duration": duration,
            ]
        )
    }

    /// Gives the device's guest memberships to the user.
    public static func claim(device: String, user: String) -> EntitledRequest {
        EntitledRequest(op: "claim", ["device": device, "user": user])
    }

    /// Takes a membership back.
    public static func revoke(membership: String, reason: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "revoke", ["membership": membership, "reason": reason])
    }

    /// Every membership the subject can see, newest first.
    public static func memberships(user: String? = nil, device: String? = nil, at: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "memberships", ["user": user, "device": device, "at": at])
    }

    /// Sets the products that unlock an entitlement.
    public static func define(entitlement: String, products: [String]) -> EntitledRequest {
        EntitledRequest(op: "define", fields: [("entitlement", .string(entitlement)), ("products", .array(products.map(JSONValue.string)))])
    }

    /// Authenticates the connection (servers with authentication turned on).
    public static func auth(token: String) -> EntitledRequest {
        EntitledRequest(op: "auth", ["token": token])
    }
}
