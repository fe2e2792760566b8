/// How much an `EntitlementStore` holds, for operators (`stats`, metrics).
public struct StoreSizes: Sendable, Hashable {
    /// Users who own at least one membership (granted to them, or claimed from a device).
    public var users: Int
    /// Devices with at least one guest purchase, claimed or not.
    public var devices: Int
    /// Memberships, revoked and expired ones included: the store forgets none.
    public var memberships: Int
    /// Entitlements defined in the catalog.
    public var entitlements: Int

    public init(users: Int, devices: Int, memberships: Int, entitlements: Int) {
        self.users = users
        self.devices = devices
        self.memberships = memberships
        self.entitlements = entitlements
    }
}
