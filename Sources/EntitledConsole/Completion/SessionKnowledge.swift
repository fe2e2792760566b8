import EntitledClient

/// What this console session has learned about the server's data, for Tab completion: the catalog's
/// entitlements and products, and every membership, user and device that responses (and pushed lines)
/// have shown.
public struct SessionKnowledge: Sendable, Hashable {
    public var entitlements: Set<String> = []
    public var products: Set<String> = []
    public var membershipIDs: Set<String> = []
    public var users: Set<String> = []
    public var devices: Set<String> = []
    /// The owner each membership had when a response last showed it: where `revoke` looks it up to show
    /// the row it will take back.
    public var membershipOwners: [String: MembershipOwner] = [:]
    /// Whether a whole catalog was learned (from `catalog`), so the entitlements above are all there are
    /// as of then.
    public var knowsCatalog = false
    /// entitled-stores' webhook endpoints, and the ids of each one's given-up messages, as `webhooks` last
    /// showed them: what `webhooks resume` and `webhooks redeliver` complete.
    public var webhookEndpoints: [String: Set<String>] = [:]

    public init() {}

    /// Takes in whatever a response shows: memberships, a catalog, a definition.
    public mutating func learn(from response: EntitledResponse) {
        guard response.isOK else { return }
        if let membership = response.membership { learn(membership) }
        for membership in response.memberships ?? [] { learn(membership) }
        // A page of the change feed (`changes`) shows memberships as its changes left them.
        for entry in (response.history ?? []) + (response.feedPage?.changes.map(\.entry) ?? []) {
            if let membership = entry.membership { learn(membership) }
            if let entitlement = entry.entitlement, let products = entry.products {
                entitlements.insert(entitlement)
                self.products.formUnion(products)
            }
        }
        if let customer = response.customer {
            for (name, entitlement) in customer.entitlements {
                entitlements.insert(name)
                products.insert(entitlement.productId)
                if !entitlement.membership.isEmpty { membershipIDs.insert(entitlement.membership) }
            }
            products.formUnion(customer.allPurchasedProductIds)
        }
        if let catalog = response.catalog {
            knowsCatalog = true
            for (entitlement, products) in catalog {
                entitlements.insert(entitlement)
                self.products.formUnion(products)
            }
        }
        if let entitlement = response["entitlement"]?.stringValue, let products = response["products"]?.arrayValue {
            entitlements.insert(entitlement)
            self.products.formUnion(products.compactMap(\.stringValue))
        }
    }

    /// Takes in the membership a pushed line shows.
    public mutating func learn(from push: EntitledPush) {
        if let membership = push.membership { learn(membership) }
    }

    mutating func learn(_ membership: MembershipInfo) {
        membershipIDs.insert(membership.id)
        products.insert(membership.productId)
        membershipOwners[membership.id] = MembershipOwner(user: membership.user, device: membership.device)
        if let user = membership.user { users.insert(user) }
        if let device = membership.device { devices.insert(device) }
    }
}

extension SessionKnowledge {
    /// Forgets an entitlement the catalog no longer has (after `undefine`).
    public mutating func forget(entitlement: String) {
        entitlements.remove(entitlement)
    }

    /// Forgets a subject that was erased, and the memberships it owned.
    public mutating func forget(user: String?, device: String?) {
        if let user { users.remove(user) }
        if let device { devices.remove(device) }
        let gone = membershipOwners.filter { _, owner in
            (user != nil && owner.user == user) || (device != nil && owner.device == device)
        }
        for id in gone.keys {
            membershipOwners[id] = nil
            membershipIDs.remove(id)
        }
    }
}

/// The subject a membership belongs to: a user, a device (a guest purchase) or a user on a device.
public struct MembershipOwner: Sendable, Hashable {
    public var user: String?
    public var device: String?

    public init(user: String?, device: String?) {
        self.user = user
        self.device = device
    }
}
