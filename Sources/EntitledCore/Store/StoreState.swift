/// Everything the store holds, with the indexes that make a check a couple of dictionary lookups.
///
/// A plain value with no locking and no clock: `EntitlementStore` guards it, and every change is applied
/// through `apply(_:)` with all its values (ids, times) already decided, so that replaying the same
/// changes in the same order rebuilds the same state.
struct StoreState: Sendable {
    /// Every membership ever created, in creation order; a membership's index here is its *slot*.
    private(set) var memberships = MembershipTable()
    private(set) var slotByID: [MembershipID: Int] = [:]
    /// The slots of the memberships each user owns.
    private(set) var ownedSlotsByUser: [String: [Int]] = [:]
    /// The slots of the guest memberships bought on each device that no user has claimed yet.
    private(set) var unclaimedSlotsByDevice: [String: [Int]] = [:]
    /// Entitlement name to the products that unlock it.
    private(set) var catalog: [String: EntitlementProducts] = [:]

    init() {}

    /// The state an image describes, with its indexes rebuilt.
    init(image: StoreImage) {
        for membership in image.memberships {
            insert(membership)
        }
        catalog = image.catalog.mapValues(EntitlementProducts.init)
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
            precondition(slotByID[membership.id] == nil, "membership id \(membership.id) is already used")
            insert(membership)
            return 0
        case .claim(let device, let user):
            guard let slots = unclaimedSlotsByDevice.removeValue(forKey: device) else { return 0 }
            for slot in slots {
                memberships[slot].user = user
            }
            ownedSlotsByUser[user, default: []].append(contentsOf: slots)
            return slots.count
        case .revoke(let id, let revocation):
            guard let slot = slotByID[id], memberships[slot].revocation == nil else { return 0 }
            memberships[slot].revocation = revocation
            return 0
        case .define(let entitlement, let products):
            catalog[entitlement] = EntitlementProducts(products)
            return 0
        }
    }

    private mutating func insert(_ membership: Membership) {
        let slot = memberships.append(membership)
        slotByID[membership.id] = slot
        if let user = membership.user {
            ownedSlotsByUser[user, default: []].append(slot)
        } else if let device = membership.device {
            unclaimedSlotsByDevice[device, default: []].append(slot)
        }
    }

    func hasUnclaimedMemberships(device: String) -> Bool {
        unclaimedSlotsByDevice[device]?.isEmpty == false
    }

    func membership(withID id: MembershipID) -> Membership? {
        slotByID[id].map { memberships[$0] }
    }

    /// Calls `body` with each membership `subject` can see (owned by its user, or unclaimed on its device).
    /// Stops early when `body` returns `false`.
    @inline(__always)
    func forEachVisibleMembership(of subject: Subject, _ body: (borrowing Membership) -> Bool) {
        if let user = subject.user, let slots = ownedSlotsByUser[user] {
            for slot in slots where !body(memberships[slot]) { return }
        }
        if let device = subject.device, let slots = unclaimedSlotsByDevice[device] {
            for slot in slots where !body(memberships[slot]) { return }
        }
    }

    /// The slots `subject` can see, newest first.
    func visibleSlots(of subject: Subject) -> [Int] {
        var slots: [Int] = []
        if let user = subject.user { slots += ownedSlotsByUser[user] ?? [] }
        if let device = subject.device { slots += unclaimedSlotsByDevice[device] ?? [] }
        return slots.sorted(by: >)
    }
}
