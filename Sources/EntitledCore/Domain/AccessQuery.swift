/// What a check asks: does `subject` have access matching `filter` at `moment`?
public struct AccessQuery: Sendable {
    public var subject: Subject
    public var filter: AccessFilter
    /// The moment to evaluate; `nil` is now, by the store's clock.
    public var moment: Timestamp?

    public init(subject: Subject, filter: AccessFilter = .anyProduct, moment: Timestamp? = nil) {
        self.subject = subject
        self.filter = filter
        self.moment = moment
    }
}

/// Which memberships a check counts.
public enum AccessFilter: Hashable, Sendable {
    /// Any product at all (the SDKs' `isSubscribed`).
    case anyProduct
    /// Memberships of exactly this product (`hasAccess(to:)`).
    case product(String)
    /// Memberships of any product that the catalog lists for this entitlement.
    case entitlement(String)
}

/// The answer to an `AccessQuery`.
public enum AccessResult: Hashable, Sendable {
    case inactive
    /// Access is on; `until` is the expiry of the matching active membership that lasts longest,
    /// `nil` when one of them is lifetime.
    case active(until: Timestamp?)

    public var isActive: Bool {
        if case .active = self { return true }
        return false
    }
}
