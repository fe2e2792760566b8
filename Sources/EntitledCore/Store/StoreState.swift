/// Everything the store holds, with the indexes that make a check a couple of dictionary lookups.
///
/// A plain value with no locking and no clock: `EntitlementStore` guards it, and every change is applied
/// through `apply(_:)` with all its values (ids, times) already decided, so that replaying the same
/// changes in the same order rebuilds the same state.
struct StoreState: Sendable {
    /// Every membership ever created, in creation order; a membership's index here is its *slot*.
    private(set) var memberships = MembershipTable()
    /// Membership id (its 64 bits) to slot. Every id the store makes is canonical (`MembershipID.bits`).
    private var slotByID: [UInt64: UInt32] = [:]
    /// What checks read of each membership, at the same slots as `memberships`.
    private var access = AccessTable()
    private var productCodes = ProductCodes()
    /// The slots of the memberships each user owns.
    private var ownedSlotsByUser = SubjectIndex()
    /// The slots of the guest memberships bought on each device that no user has claimed yet.
    private var unclaimedSlotsByDevice = SubjectIndex()
    /// Entitlement name to the products that unlock it.
    private(set) var catalog: [String: EntitlementProducts] = [:] {
        didSet { listSmallCatalog() }
    }
    /// The catalog as a list while it holds at most `smallCatalogLimit` entitlements (most apps have a
    /// handful), `nil` beyond: comparing a check's entitlement with a few names costs less than hashing it
    /// (callgrind: about 250 instructions a check for the dictionary's hash).
    private var smallCatalog: [(name: String, products: EntitlementProducts)]? = []
    static let smallCatalogLimit = 8

    init() {}

    /// The state an image describes, with its indexes rebuilt.
    init(image: StoreImage) {
        for membership in image.memberships {
            insert(membership)
        }
        for (entitlement, products) in image.catalog {
            catalog[entitlement] = EntitlementProducts(products, codes: &productCodes)
        }
        listSmallCatalog()  // observers do not run in an initializer
    }

    private mutating func listSmallCatalog() {
        smallCatalog = catalog.count <= Self.smallCatalogLimit ? catalog.map { (name: $0.key, products: $0.value) } : nil
    }

    /// The products that unlock `entitlement`, or `nil` when the catalog does not define it.
    ///
    /// `mutating` although it changes nothing, for the reason `forEachVisibleAccess` gives.
    @inline(__always)
    mutating func products(unlocking entitlement: String) -> EntitlementProducts? {
        guard let smallCatalog else { return catalog[entitlement] }
        for entry in smallCatalog where entry.name == entitlement { return entry.products }
        return nil
    }

    /// A copy of the data (not the indexes) as of change `sequence`. Cheap: the membership table is shared
    /// with this state until one of them changes, and then only one chunk is copied.
    func image(sequence: UInt64) -> StoreImage {
        StoreImage(sequence: sequence, memberships: memberships, catalog: catalog.mapValues(\.sorted))
    }

    /// Applies `change` and returns how many memberships a claim moved (0 for other changes).
    @discardableResult
    mutating func apply(_ change: StoreChange) -> Int {
        switch change {
        case .create(let membership):
            precondition(slot(of: membership.id) == nil, "membership id \(membership.id) is already used")
            insert(membership)
            return 0
        case .claim(let device, let user):
            guard let slots = unclaimedSlotsByDevice.removeAll(for: device) else { return 0 }
            for slot in slots {
                memberships[slot].user = user
                ownedSlotsByUser.add(slot, to: user)
            }
            return slots.count
        case .revoke(let id, let revocation):
            guard let slot = slot(of: id), memberships[slot].revocation == nil else { return 0 }
            memberships[slot].revocation = revocation
            access[slot].isRevoked = true
            return 0
        case .define(let entitlement, let products):
            catalog[entitlement] = EntitlementProducts(products, codes: &productCodes)
            return 0
        }
    }

    private mutating func insert(_ membership: Membership) {
        let slot = memberships.append(membership)
        access.append(AccessRecord(membership, product: productCodes.intern(membership.productId)))
        guard let bits = membership.id.bits else {
            preconditionFailure("membership id \(membership.id) is not one the store makes")
        }
        precondition(slot <= Int(UInt32.max), "a store holds at most \(UInt32.max) memberships")
        slotByID[bits] = UInt32(slot)
        if let user = membership.user {
            ownedSlotsByUser.add(slot, to: user)
        } else if let device = membership.device {
            unclaimedSlotsByDevice.add(slot, to: device)
        }
    }

    private func slot(of id: MembershipID) -> Int? {
        id.bits.flatMap { slotByID[$0] }.map(Int.init)
    }

    func hasUnclaimedMemberships(device: String) -> Bool {
        unclaimedSlotsByDevice.contains(device)
    }

    func membership(withID id: MembershipID) -> Membership? {
        slot(of: id).map { memberships[$0] }
    }

    /// Calls `body` with the access record of each membership `subject` can see (owned by its user, or
    /// unclaimed on its device). Stops early when `body` returns `false`.
    ///
    /// `mutating` although it changes nothing: called on the store's state pointer, a non-mutating method
    /// made the compiler copy the whole `StoreState` first (it cannot prove `body` leaves the pointee
    /// alone), retaining and releasing every table in it, about 650 instructions a check in callgrind.
    /// An `inout` call passes the address instead. Concurrent readers are fine: nothing is written.
    @inline(__always)
    mutating func forEachVisibleAccess(of subject: Subject, _ body: (AccessRecord) -> Bool) {
        if let user = subject.user {
            guard ownedSlotsByUser.allSlots(of: user, satisfy: { body(access[$0]) }) else { return }
        }
        if let device = subject.device {
            _ = unclaimedSlotsByDevice.allSlots(of: device) { body(access[$0]) }
        }
    }

    /// The code of `product`, or `nil` when no membership or catalog entry ever named it.
    func productCode(of product: String) -> ProductCode? {
        productCodes.code(of: product)
    }

    /// The slots `subject` can see, newest first.
    func visibleSlots(of subject: Subject) -> [Int] {
        var slots: [Int] = []
        if let user = subject.user { slots += ownedSlotsByUser.slots(of: user) }
        if let device = subject.device { slots += unclaimedSlotsByDevice.slots(of: device) }
        return slots.sorted(by: >)
    }
}
