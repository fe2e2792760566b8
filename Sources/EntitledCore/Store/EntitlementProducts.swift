/// The products that unlock one entitlement, kept both as a sorted list (what `catalog` shows) and as
/// product codes, which the check path compares as integers.
struct EntitlementProducts: Sendable {
    /// Sorted, without duplicates.
    let sorted: [String]
    /// The same products' codes, sorted.
    private let codes: [ProductCode]

    init(_ products: [String], codes productCodes: inout ProductCodes) {
        sorted = Set(products).sorted()
        codes = sorted.map { productCodes.intern($0) }.sorted()
    }

    @inline(__always)
    func unlocks(_ product: ProductCode) -> Bool {
        // Catalogs list a handful of products per entitlement: a scan of a few integers beats hashing.
        codes.count <= 16 ? codes.contains(product) : binarySearch(product)
    }

    private func binarySearch(_ product: ProductCode) -> Bool {
        var low = 0
        var high = codes.count
        while low < high {
            let middle = (low + high) / 2
            if codes[middle] < product { low = middle + 1 } else { high = middle }
        }
        return low < codes.count && codes[low] == product
    }
}
