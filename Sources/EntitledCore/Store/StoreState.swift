/// Everything the store holds, with the indexes that make a check a couple of dictionary lookups.
///
/// A plain value with no locking and no clock: `EntitlementStore` guards it, and every change is applied
/// through `apply(_:)` with all its values (ids, times) already decided, so that replaying the same
/// changes in the same order rebuilds the same state.
struct StoreState: Sendable {
    /// Every membership ever created, in creation order; a membership's index here is its *slot*.
    private(set) var memberships = MembershipTable()
    /// Membership id (its 64 bits) to slot. Every id the store makes is canonical (`MembershipID.bits`).
    private var slotByID = IDSlotTable()
    /// What checks read of each membership, at the same slots as `memberships`.
    private var access = AccessTable()
    /// When access of each membership stops by itself, for `expired` pushes (`AccessEndSchedule`).
    var accessEnds = AccessEndSchedule()
    private var productCodes = ProductCodes()
    /// The slots of the memberships each user owns.
    private var ownedSlotsByUser = SubjectIndex()
    /// The slots of the guest memberships bought on each device that no user has claimed yet.
    private var unclaimedSlotsByDevice = SubjectIndex()
    /// The slots of the guest memberships bought on each device that a user claimed: the device saw them
    /// until the claim, which checks of the past and the device's audit trail need.
    private var claimedSlotsByDevice = SubjectIndex()
    /// The slots of the memberships each user owned before a transfer gave them to another user: the
    /// user saw them until then, which checks of the past and the user's audit trail need.
    private var formerlyOwnedSlotsByUser = SubjectIndex()
    /// The devices in either device index: kept as changes happen, since counting the union of two
    /// dictionaries of a million devices would hold the store's lock for tens of milliseconds per `stats`.
    private(set) var deviceCount = 0
    /// The slots of the memberships holding each store transaction id, and each original transaction id.
    private var slotsByTransaction = TransactionIndex()
    private var slotsByOriginalTransaction = TransactionIndex()
    /// Each grant's idempotency key, with the slot of the membership it created.
    private(set) var idempotencyKeys = ShardedDictionary<String, UInt32>()
    /// The revisions of the memberships that have any, oldest first (see `MembershipRevision`).
    private(set) var revisions = ShardedDictionary<UInt32, [MembershipRevision]>()
    /// The catalog's changes, oldest first.
    private(set) var catalogRevisions: [CatalogRevision] = []
    /// The erasures, oldest first (`StoreState+Erasure.swift`).
    var erasures: [ErasureRecord] = []
    /// Which memberships each change touched, in order: the change feed's index (`StoreState+Feed.swift`).
    var feed = ChangeFeed()
    /// How far back `feed` reaches.
    var feedRetention = FeedRetention.standard
    /// How many slots hold an erased membership.
    private(set) var erasedCount = 0
    /// When the newest change took effect (milliseconds; `Int64.min` before any): a check of a moment at
    /// or after it sees the memberships as they are, and needs no history. At least every membership's
    /// `createdAt` and every change's recording time (which is never before its effect). After a restore
    /// from an image it may be earlier than it was (an imported plain grant's recording time is not kept,
    /// only its membership's `createdAt`), but never earlier than a change's effect: a moment after it
    /// still saw nothing change since.
    private(set) var newestChangeTime = Int64.min
    /// Entitlement name to the products that unlock it.
    private(set) var catalog: [String: EntitlementProducts] = [:] {
        didSet { listSmallCatalog() }
    }
    /// The catalog as a list while it holds at most `smallCatalogLimit` entitlements (most apps have a
    /// handful), `nil` beyond: comparing a check's entitlement with a few names costs less than hashing it
    /// (callgrind: about 250 instructions a check for the dictionary's hash).
    private var smallCatalog: [(name: String, products: EntitlementProducts)]? = []
    static let smallCatalogLimit = 8
    /// From how many memberships a restored store builds its indexes on two threads.
    static let smallestRestoreOnTwoThreads = 16_384
    /// Which numbering of slots this state has: drawn anew for every state built (a start, a restart, a
    /// replica loaded again), since loading an image that left erased memberships out renumbers the slots
    /// after them; copies of the state (a rollback's) keep it with the slots. A listing's `SourceCursor`
    /// is followed by slot only within the numbering that gave it.
    private(set) var slotNumbering = UInt64.random(in: 1...UInt64.max)

    init() {}

    /// The state an image describes, with its indexes rebuilt.
    init(image: StoreImage) {
        // The image's table is taken as it is (its chunks are shared, not copied): only the indexes are
        // built, on two threads, each sized for the count first (StoreState+Restore.swift).
        let table = image.memberships
        memberships = table
        // A small table is indexed on this thread: starting a second would cost more than it saves.
        let (ownership, records) =
            table.count < Self.smallestRestoreOnTwoThreads
            ? (RestoredOwnership(of: table), RestoredRecords(of: table))
            : bothAtOnce({ RestoredOwnership(of: table) }, { RestoredRecords(of: table) })
        ownedSlotsByUser = ownership.ownedSlotsByUser
        unclaimedSlotsByDevice = ownership.unclaimedSlotsByDevice
        deviceCount = ownership.deviceCount
        slotByID = records.slotByID
        access = records.access
        productCodes = records.productCodes
        erasedCount = records.erasedCount
        slotsByTransaction = records.slotsByTransaction
        slotsByOriginalTransaction = records.slotsByOriginalTransaction
        for (entitlement, products) in image.catalog {
            catalog[entitlement] = EntitlementProducts(products, codes: &productCodes)
        }
        listSmallCatalog()  // observers do not run in an initializer
        idempotencyKeys = image.idempotencyKeys
        revisions = image.revisions
        catalogRevisions = image.catalogRevisions
        erasures = image.erasures
        feed = image.feed
        // In slot order, so that each device's claimed slots are oldest first, as `SubjectIndex` keeps them.
        for slot in revisions.map(\.key).sorted() {
            let slotRevisions = revisions[slot]!
            let membership = memberships[Int(slot)]
            // A claim, or a transfer of a guest membership, took it from its device's unclaimed list.
            let claimed = slotRevisions.contains {
                $0.action == .claim || ($0.action == .transfer && $0.before?.user == nil && $0.before?.device != nil)
            }
            if claimed, let device = membership.device {
                if !knowsDevice(device) { deviceCount += 1 }
                claimedSlotsByDevice.add(Int(slot), to: device)
            }
            for revision in slotRevisions where revision.action == .transfer {
                if let former = revision.before?.user { noteFormerOwner(former, ofSlot: Int(slot)) }
            }
        }
        // A plain grant keeps no revision: its membership's `createdAt` says when it took effect. Every
        // one counts, not the last slot's alone: an imported grant dates its membership in the past.
        newestChangeTime = max(
            records.latestCreation,
            revisions.compactMap { $0.value.last?.context.recordedAt.millisecondsSinceEpoch }.max() ?? .min
        )
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
        StoreImage(
            sequence: sequence, memberships: memberships, catalog: catalog.mapValues(\.sorted),
            idempotencyKeys: idempotencyKeys, revisions: revisions, catalogRevisions: catalogRevisions,
            erasures: erasures, feed: feed, erasedMembershipCount: erasedCount
        )
    }

    /// Applies `change`, number `sequence` made in `context`. An erasure follows `plannedErasure` when the
    /// caller has already made its plan on this same state (`EntitlementStore.erase`, which needs it for
    /// its answer), so that the scan of every membership is done once; replay makes its own.
    mutating func apply(_ change: StoreChange, context: ChangeContext, sequence: UInt64, plannedErasure: ErasurePlan? = nil) {
        newestChangeTime = max(newestChangeTime, context.recordedAt.millisecondsSinceEpoch)
        switch change {
        case .create(let membership, let idempotencyKey):
            let slot = UInt32(insert(membership))
            noteInFeed(membership.id.bits, sequence: sequence, context: context)
            if let idempotencyKey { idempotencyKeys[idempotencyKey] = slot }
            scheduleAccessEnd(ofSlot: Int(slot), after: context.recordedAt)
            // A plain grant's trail entry is the membership itself; only what it cannot say is kept.
            if context.actor != ChangeContext.localActor || context.reason != nil {
                revisions[slot] = [
                    MembershipRevision(sequence: sequence, context: context, action: .grant, effectiveAt: membership.createdAt, before: nil)
                ]
            }
        case .claim(let device, let user):
            guard let slots = unclaimedSlotsByDevice.removeAll(for: device) else { return }
            for slot in slots {
                record(.claim, of: slot, sequence: sequence, context: context, effectiveAt: context.recordedAt)
                memberships[slot].user = user
                ownedSlotsByUser.add(slot, to: user)
                claimedSlotsByDevice.add(slot, to: device)
            }
        case .revoke(let id, let revocation):
            guard let slot = slot(of: id), memberships[slot].revocation == nil else { return }
            record(.revoke, of: slot, sequence: sequence, context: context, effectiveAt: revocation.revokedAt)
            memberships[slot].revocation = revocation
            access[slot].isRevoked = true
        case .define(let entitlement, let products):
            catalog[entitlement] = EntitlementProducts(products, codes: &productCodes)
            catalogRevisions.append(
                CatalogRevision(sequence: sequence, context: context, entitlement: entitlement, products: catalog[entitlement]!.sorted)
            )
        case .undefine(let entitlement):
            guard let removed = catalog.removeValue(forKey: entitlement) else { return }
            catalogRevisions.append(
                CatalogRevision(sequence: sequence, context: context, entitlement: entitlement, products: removed.sorted, isRemoval: true)
            )
        case .erase(let user, let device):
            applyErasure(
                plannedErasure ?? erasurePlan(user: user, device: device), user: user, device: device, sequence: sequence, context: context
            )
        case .transfer(let id, let user):
            guard let slot = slot(of: id), memberships[slot].user != user else { return }
            record(.transfer, of: slot, sequence: sequence, context: context, effectiveAt: context.recordedAt)
            let membership = memberships[slot]
            if let previous = membership.user {
                ownedSlotsByUser.remove(slot, from: previous)
                noteFormerOwner(previous, ofSlot: slot)
            } else if let device = membership.device {
                // A guest purchase leaves its device's unclaimed list as a claim would take it.
                unclaimedSlotsByDevice.remove(slot, from: device)
                claimedSlotsByDevice.add(slot, to: device)
            }
            memberships[slot].user = user
            ownedSlotsByUser.add(slot, to: user)
        case .extend(let id, let expiresAt):
            guard let slot = slot(of: id), let previous = memberships[slot].expiresAt else { return }
            record(.extend(previousExpiresAt: previous), of: slot, sequence: sequence, context: context, effectiveAt: context.recordedAt)
            memberships[slot].expiresAt = expiresAt
            access[slot] = AccessRecord(memberships[slot], product: productCodes.intern(memberships[slot].productId))
            scheduleAccessEnd(ofSlot: slot, after: context.recordedAt)
        case .event(let event, let result):
            guard let slot = slot(of: result.id) else { return }
            // Effective at the event's time, kept within the membership's own history so that its
            // revisions stay in order: not before its last change, not after the event was recorded.
            let earliest = revisions[UInt32(slot)]?.last?.effectiveAt ?? memberships[slot].createdAt
            let effectiveAt = min(max(event.time, earliest), max(context.recordedAt, earliest))
            record(.event(event), of: slot, sequence: sequence, context: context, effectiveAt: effectiveAt)
            // Transactions are only ever appended (a refund marks one): index the new ones.
            let known = memberships[slot].hasLifecycle ? memberships[slot].lifecycle.transactions.count : 0
            indexTransactions(of: result, at: slot, from: known)
            memberships[slot] = result
            access[slot] = AccessRecord(result, product: productCodes.intern(result.productId))
            scheduleAccessEnd(ofSlot: slot, after: context.recordedAt)
        }
    }

    /// Keeps the revision that is about to change the membership at `slot` (which is still as before).
    private mutating func record(
        _ action: MembershipRevision.Action, of slot: Int, sequence: UInt64, context: ChangeContext, effectiveAt: Timestamp
    ) {
        var before = memberships[slot]
        if before.hasLifecycle {
            // Without the lists that only grow: kept whole in every revision, a subscription renewed k times
            // would hold k²/2 transactions. Checks of the past need neither; the trail shows the lists
            // of the membership as it is now only.
            var lifecycle = before.lifecycle
            lifecycle.transactions = []
            lifecycle.appliedEventIDs = []
            before.lifecycle = lifecycle
        }
        let revision = MembershipRevision(
            sequence: sequence, context: context, action: action, effectiveAt: effectiveAt, before: before
        )
        revisions.modify(UInt32(slot), default: []) { $0.append(revision) }
        noteInFeed(before.id.bits, sequence: sequence, context: context)
    }

    /// Remembers that `user` owned the membership at `slot` before a transfer (once per user and slot).
    private mutating func noteFormerOwner(_ user: String, ofSlot slot: Int) {
        guard !formerlyOwnedSlotsByUser.slots(of: user).contains(slot) else { return }
        formerlyOwnedSlotsByUser.add(slot, to: user)
    }

    /// The slots of the memberships `user` owned before a transfer gave them to another user.
    func formerlyOwnedSlotsList(_ user: String) -> [Int] { formerlyOwnedSlotsByUser.slots(of: user) }

    /// Forgets that `user` owned the membership at `slot` before a transfer, and takes the user's id out
    /// of its revisions (an erasure of that user: the membership stays with its new owner).
    mutating func forgetFormerOwner(_ user: String, ofSlot slot: Int) {
        formerlyOwnedSlotsByUser.remove(slot, from: user)
        guard var slotRevisions = revisions[UInt32(slot)] else { return }
        for index in slotRevisions.indices where slotRevisions[index].before?.user == user {
            slotRevisions[index].before?.user = nil
        }
        revisions[UInt32(slot)] = slotRevisions
    }

    /// The slot of the membership a grant with `key` created, if any did.
    func slot(forIdempotencyKey key: String) -> Int? {
        idempotencyKeys[key].map(Int.init)
    }

    @discardableResult
    private mutating func insert(_ membership: Membership) -> Int {
        let slot = memberships.append(membership)
        index(membership, at: slot)
        return slot
    }

    /// Room in every index for `count` memberships, each with its own user.
    mutating func reserveIndexes(forMemberships count: Int) {
        slotByID.reserveCapacity(count)
        access.reserveCapacity(count)
        ownedSlotsByUser.reserveCapacity(count)
    }

    /// Adds `membership`, held at `slot` of `memberships`, to the indexes and the access table.
    private mutating func index(_ membership: Membership, at slot: Int) {
        access.append(AccessRecord(membership, product: productCodes.intern(membership.productId)))
        if membership.isErased {
            // An image taken without `withoutErasedMemberships()`: the slot stays empty, as it was.
            access[slot].isRevoked = true
            erasedCount += 1
            return
        }
        guard let bits = membership.id.bits else {
            preconditionFailure("membership id \(membership.id) is not one the store makes")
        }
        index(slot: slot, id: bits, user: membership.user, device: membership.device)
        indexTransactions(of: membership, at: slot, from: 0)
    }

    /// Adds the membership at `slot` to the index of ids and to its owner's: its user's, or, for a guest
    /// purchase, its device's unclaimed ones.
    @inline(__always)
    private mutating func index(slot: Int, id bits: UInt64, user: String?, device: String?) {
        precondition(slot <= Int(UInt32.max), "a store holds at most \(UInt32.max) memberships")
        // One hash for the check and the insert: a replay creates a million memberships this way.
        let previous = slotByID.insertIfAbsent(bits, slot: UInt32(slot))
        precondition(previous == nil, "membership id \(MembershipID(bits: bits)) is already used")
        if let user {
            ownedSlotsByUser.add(slot, to: user)
        } else if let device {
            if !knowsDevice(device) { deviceCount += 1 }
            unclaimedSlotsByDevice.add(slot, to: device)
        }
    }

    /// Adds the transactions of `membership` (at `slot`) from the `first`-th on to the transaction indexes.
    private mutating func indexTransactions(of membership: Membership, at slot: Int, from first: Int) {
        guard membership.hasLifecycle else { return }
        let transactions = membership.lifecycle.transactions
        guard first < transactions.count else { return }
        for transaction in transactions[first...] {
            slotsByTransaction.add(transaction.id, slot: UInt32(slot))
            slotsByOriginalTransaction.add(transaction.originalTransactionId, slot: UInt32(slot))
        }
    }

    /// The slots of the memberships holding the store transaction `id`, oldest first.
    func slots(ofTransaction id: String) -> [Int] { slotsByTransaction.slots(of: id) }

    /// The slots of the memberships whose transactions belong to the subscription that transaction `id`
    /// started, oldest first.
    func slots(ofOriginalTransaction id: String) -> [Int] { slotsByOriginalTransaction.slots(of: id) }

    /// Whether `device` bought a guest membership, claimed or not. (A claim moves the device from one
    /// index to the other; no change removes a device from both.)
    func knowsDevice(_ device: String) -> Bool {
        unclaimedSlotsByDevice.contains(device) || claimedSlotsByDevice.contains(device)
    }

    /// How many users own a membership.
    var userCount: Int { ownedSlotsByUser.count }

    func slot(of id: MembershipID) -> Int? {
        id.bits.flatMap { slotByID[$0] }.map(Int.init)
    }

    /// Whether a membership has this id.
    ///
    /// `mutating` although it changes nothing, for the reason `forEachVisibleAccess` gives: a grant asks
    /// this for every id it makes, and the non-mutating form copied the whole state (callgrind: about
    /// 2,000 instructions a grant in copying and destroying it).
    mutating func containsMembership(withID id: MembershipID) -> Bool {
        slot(of: id) != nil
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

    /// Starts loading the first entry a check of the user spelled by `utf8` reads (`EntitlementStore.prefetchingUsers`).
    /// `mutating` for the reason `forEachVisibleAccess` is; it writes nothing.
    @inline(__always)
    mutating func prefetchUser(utf8: UnsafeRawBufferPointer) {
        ownedSlotsByUser.prefetch(utf8: utf8)
    }

    /// Starts loading the index entries that applying `change` writes first, when it creates a membership:
    /// its id's and its user's. A replay passes the change a few ahead of the one it applies, so that the
    /// two cache misses of each creation overlap with the work before it. `mutating` for the reason
    /// `forEachVisibleAccess` is; it writes nothing.
    mutating func prefetchEntries(of change: StoreChange) {
        guard case .create(let membership, _) = change else { return }
        if let bits = membership.id.bits { slotByID.prefetch(bits) }
        if var user = membership.user { user.withUTF8 { ownedSlotsByUser.prefetch(utf8: UnsafeRawBufferPointer($0)) } }
    }

    /// `membership(withID:)` for the store, which reaches this state through a pointer: `mutating` for
    /// the reason `forEachVisibleAccess` gives (the non-mutating call copied the whole state, once per
    /// change a restart replays).
    mutating func existingMembership(withID id: MembershipID) -> Membership? {
        membership(withID: id)
    }

    /// Starts loading the id index's entry for the id `bits` (the next grant's). `mutating` for the reason
    /// `forEachVisibleAccess` is; it writes nothing.
    @inline(__always)
    mutating func prefetchMembershipID(bits: UInt64) {
        slotByID.prefetch(bits)
    }

    /// The code of `product`, or `nil` when no membership or catalog entry ever named it.
    func productCode(of product: String) -> ProductCode? {
        productCodes.code(of: product)
    }

    func accessRecord(atSlot slot: Int) -> AccessRecord { access[slot] }
    func ownedSlotsByUserList(_ user: String) -> [Int] { ownedSlotsByUser.slots(of: user) }
    func unclaimedSlotsList(_ device: String) -> [Int] { unclaimedSlotsByDevice.slots(of: device) }
    func claimedSlotsList(_ device: String) -> [Int] { claimedSlotsByDevice.slots(of: device) }

    // MARK: Erasure (the plan is in StoreState+Erasure.swift)

    /// Empties `slot`: its membership leaves every index and its history goes; the slot then holds
    /// `erasedMembership` and an access record that grants nothing.
    mutating func erase(slot: Int) {
        let membership = memberships[slot]
        if let bits = membership.id.bits { slotByID.removeValue(forKey: bits) }
        for revision in revisions[UInt32(slot)] ?? [] where revision.action == .transfer {
            if let former = revision.before?.user { formerlyOwnedSlotsByUser.remove(slot, from: former) }
        }
        if membership.hasLifecycle {
            for transaction in membership.lifecycle.transactions {
                slotsByTransaction.remove(transaction.id, slot: UInt32(slot))
                slotsByOriginalTransaction.remove(transaction.originalTransactionId, slot: UInt32(slot))
            }
        }
        if let user = membership.user { ownedSlotsByUser.remove(slot, from: user) }
        if let device = membership.device {
            let known = knowsDevice(device)
            unclaimedSlotsByDevice.remove(slot, from: device)
            claimedSlotsByDevice.remove(slot, from: device)
            if known, !knowsDevice(device) { deviceCount -= 1 }
        }
        revisions[UInt32(slot)] = nil
        memberships[slot] = Self.erasedMembership
        access[slot].isRevoked = true
        erasedCount += 1
    }

    /// Takes the device off the membership at `slot` (another user's, bought or claimed on an erased
    /// device), in its revisions too, and off the device's claimed list.
    mutating func detachDevice(ofSlot slot: Int) {
        guard let device = memberships[slot].device else { return }
        let known = knowsDevice(device)
        claimedSlotsByDevice.remove(slot, from: device)
        if known, !knowsDevice(device) { deviceCount -= 1 }
        memberships[slot].device = nil
        if var slotRevisions = revisions[UInt32(slot)] {
            for index in slotRevisions.indices where slotRevisions[index].before?.device != nil {
                slotRevisions[index].before?.device = nil
            }
            revisions[UInt32(slot)] = slotRevisions
        }
    }

    /// Removes the idempotency keys that, with their membership's slot, satisfy `shouldRemove`.
    mutating func removeIdempotencyKeys(where shouldRemove: (_ key: String, _ slot: UInt32) -> Bool) {
        idempotencyKeys.removeAll(where: shouldRemove)
    }

    /// The slots `subject` can see, newest first.
    func visibleSlots(of subject: Subject) -> [Int] {
        var slots: [Int] = []
        if let user = subject.user { slots += ownedSlotsByUser.slots(of: user) }
        if let device = subject.device { slots += unclaimedSlotsByDevice.slots(of: device) }
        return slots.sorted(by: >)
    }

    /// How many memberships `subject` can see now, without listing them.
    func visibleSlotCount(of subject: Subject) -> Int {
        (subject.user.map { ownedSlotsByUser.count(of: $0) } ?? 0) + (subject.device.map { unclaimedSlotsByDevice.count(of: $0) } ?? 0)
    }

    /// The length of the lists `slotsEverVisible(to:)` joins: at least the number of memberships the
    /// subject can see or could see, and at most four times it (a membership is in at most four lists:
    /// its owner's, its former owner's, and its device's claimed or unclaimed one, each once).
    func everVisibleSlotBound(of subject: Subject) -> Int {
        var bound = 0
        if let user = subject.user { bound += ownedSlotsByUser.count(of: user) + formerlyOwnedSlotsByUser.count(of: user) }
        if let device = subject.device { bound += unclaimedSlotsByDevice.count(of: device) + claimedSlotsByDevice.count(of: device) }
        return bound
    }
}
