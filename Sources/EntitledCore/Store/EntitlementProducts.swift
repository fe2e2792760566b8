/// The products that unlock one entitlement, kept both as a sorted list (what `catalog` shows) and in a
/// form that answers "does this product unlock it?" without scanning a long list on the check path.
struct EntitlementProducts: Sendable {
    /// Sorted, without duplicates.
    let sorted: [String]
    /// The same products, for entitlements with many of them.
    private let lookup: Set<String>

    /// Up to this many products a linear scan of `sorted` beats hashing the product id.
    private static let linearScanLimit = 8

    init(_ products: [String]) {
        lookup = Set(products)
        sorted = lookup.sorted()
    }

    @inline(__always)
    func unlocks(_ productId: String) -> Bool {
        sorted.count <= Self.linearScanLimit ? sorted.contains(productId) : lookup.contains(productId)
    }
}
