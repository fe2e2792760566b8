/// One receiver of outgoing webhooks, as the settings file names it: where to send, the secrets to sign
/// with, which changes it gets, and how hard to try.
public struct WebhookEndpoint: Sendable, Hashable {
    /// A name of letters, digits, `-` and `_`: it names the endpoint's state file, its metrics and its
    /// entry in `entitlectl webhooks`.
    public var name: String
    /// The receiver's URL (`https://`, or `http://` for a receiver on the same machine or network).
    public var url: String
    /// The signing secrets (`whsec_<base64>`), newest first: every message is signed with each, so that a
    /// receiver rolling to a new secret accepts either (Standard Webhooks, "Signature scheme").
    public var secrets: [String]
    /// Which changes it gets.
    public var filter: WebhookFilter
    /// How long one try may take, the answer included.
    public var timeout: Duration
    /// The most messages in flight at once (each of another subject).
    public var concurrency: Int
    /// How long a message is tried before it is given up (days, as Stripe's three).
    public var retryPeriod: Duration

    public init(
        name: String, url: String, secrets: [String], filter: WebhookFilter = WebhookFilter(), timeout: Duration = .seconds(15),
        concurrency: Int = 16, retryPeriod: Duration = .seconds(3 * 86_400)
    ) {
        self.name = name
        self.url = url
        self.secrets = secrets
        self.filter = filter
        self.timeout = timeout
        self.concurrency = max(1, concurrency)
        self.retryPeriod = retryPeriod
    }

    /// Whether `name` may name an endpoint: 1 to 64 of `A-Z a-z 0-9 - _`.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }
}

/// Which changes an endpoint gets: every one by default; each list given narrows it (a change passes
/// when it passes every list given).
public struct WebhookFilter: Sendable, Hashable {
    /// The actions (`grant`, `revoke`, `renewal`, `refund`, `erase`, `define`, ...); `nil` for all.
    public var actions: Set<String>?
    /// The products of the memberships changed; `nil` for all. Catalog changes name no product: they pass
    /// only without this list (and without `entitlements`). Erasures pass it always: a copy of the
    /// memberships the endpoint got must learn which to delete (GDPR).
    public var products: Set<String>?
    /// The entitlements whose products the memberships are of, by the catalog as the deliverer last read
    /// it; `nil` for all.
    public var entitlements: Set<String>?

    public init(actions: Set<String>? = nil, products: Set<String>? = nil, entitlements: Set<String>? = nil) {
        self.actions = actions
        self.products = products
        self.entitlements = entitlements
    }

    /// Whether a change with `action` of a membership of `product` (none for the catalog or an erasure)
    /// passes, `catalog` naming each entitlement's products.
    public func passes(action: String, product: String?, catalog: [String: Set<String>]) -> Bool {
        if let actions, !actions.contains(action) { return false }
        if action == "erase" { return true }
        if let products {
            guard let product, products.contains(product) else { return false }
        }
        if let entitlements {
            guard let product, entitlements.contains(where: { catalog[$0]?.contains(product) == true }) else { return false }
        }
        return true
    }
}
