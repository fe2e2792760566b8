/// What a check needs to know of one membership, packed into 16 bytes with no references.
///
/// The check path reads these instead of `Membership`s: one small record per membership (four to a
/// cache line, no reference counting to copy one) rather than a 150-byte struct of strings. Measured with
/// `perf` at 100,000 users, loading the `Membership` and its slot array were the two cache misses that
/// dominated a check.
struct AccessRecord: Sendable {
    /// The membership's product, as a `ProductCodes` code.
    var product: ProductCode
    var isRevoked: Bool
    /// When access stops (`Membership.accessStops`: expiry, a grace period's end, a pause), in
    /// milliseconds since the epoch; `Int64.max` for lifetime access.
    var expiresAt: Int64

    init(_ membership: Membership, product: ProductCode) {
        self.init(
            product: product, isRevoked: membership.revocation != nil, expiresAt: membership.accessStops?.millisecondsSinceEpoch ?? .max
        )
    }

    init(product: ProductCode, isRevoked: Bool, expiresAt: Int64) {
        self.product = product
        self.isRevoked = isRevoked
        self.expiresAt = expiresAt
    }

    /// The same rule as `Membership.status(at:)`'s statuses that grant access: revoked never grants
    /// access, and access stops at `accessStops`.
    @inline(__always)
    func isActive(at moment: Int64) -> Bool {
        !isRevoked && expiresAt > moment
    }
}

/// A product id as a small number, so access records and catalog entries compare integers, not strings.
typealias ProductCode = Int32

/// The product ids seen so far (in memberships or the catalog), each with its code. Codes are never
/// reused or forgotten, so a code stays valid for the life of the store.
struct ProductCodes: Sendable {
    private var names = InternedNames()

    /// The code of `product`, if it was ever seen.
    @inline(__always)
    func code(of product: String) -> ProductCode? {
        names.number(of: product)
    }

    /// The code of `product`, giving it the next one if it is new.
    mutating func intern(_ product: String) -> ProductCode {
        names.intern(product)
    }
}
