import Synchronization

/// The in-memory store of memberships and the entitlement catalog: the source of truth for every read.
///
/// Safe to use from any thread. Reads (checks, listings) run concurrently under a shared lock and do not
/// wait for each other, only for a write; writes take the lock alone for the few microseconds a change
/// needs (and go before readers that arrive after them, so checks cannot starve a grant).
///
/// With a `ChangeJournal`, every change is numbered and handed to the journal before it takes effect, in
/// the order the changes are applied; writes return that number (`Recorded.sequence`) so the caller can
/// wait until the journal holds it durably before answering. The store reads time from the clock it was
/// given, so tests can fix "now".
public final class EntitlementStore: Sendable {
    let lock = ReadWriteLock()
    /// The state, guarded by `lock`: only touched inside `lock.withReadLock` / `lock.withWriteLock`.
    ///
    /// Behind a pointer rather than a stored `var`: reading a stored struct property of a class made
    /// the compiler copy the whole `StoreState` (retaining every dictionary and table in it) and check
    /// exclusive access at run time on every check; callgrind counted over 1,000 instructions a check in
    /// those. The lock already provides the exclusivity the run-time check was verifying.
    nonisolated(unsafe) private let statePointer: UnsafeMutablePointer<StoreState>
    var state: StoreState {
        unsafeAddress { UnsafePointer(statePointer) }
        unsafeMutableAddress { statePointer }
    }
    // Guarded by `lock`: the number of the last change applied.
    nonisolated(unsafe) var lastSequence: UInt64
    // Guarded by `lock` (used under the write lock): random bits for membership ids.
    nonisolated(unsafe) var random = BufferedRandomNumberGenerator()
    let clock: @Sendable () -> Timestamp
    /// `nextAccessEndMilliseconds`: when the schedule of access ends has something due, for the loop
    /// that takes them to read every turn without the lock.
    let nextAccessEndHint = Atomic<Int64>(.max)
    private let journal: (any ChangeJournal)?

    /// An empty store that reads the current time from `clock` (the system clock by default) and records
    /// its changes in `journal`, if one is given.
    public convenience init(
        clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
        journal: (any ChangeJournal)? = nil
    ) {
        self.init(restoring: StoreImage(sequence: 0, memberships: MembershipTable(), catalog: [:]), clock: clock, journal: journal)
    }

    /// A store holding what `image` holds; its next change is numbered `image.sequence + 1`. Its change
    /// feed reaches back as `feedRetention` says, from the changes applied to it on (a log replayed into it
    /// included): what the image's feed holds is kept as it is.
    public init(
        restoring image: StoreImage,
        clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() },
        journal: (any ChangeJournal)? = nil,
        feedRetention: FeedRetention = .standard
    ) {
        statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: StoreState(image: image))
        statePointer.pointee.feedRetention = feedRetention
        self.lastSequence = image.sequence
        self.clock = clock
        self.journal = journal
        statePointer.pointee.scheduleAccessEnds(after: clock())
        nextAccessEndHint.store(statePointer.pointee.accessEnds.nextDue ?? .max, ordering: .relaxed)
    }

    deinit {
        statePointer.deinitialize(count: 1)
        statePointer.deallocate()
    }

    /// The current time by this store's clock.
    public func now() -> Timestamp { clock() }

    /// The number of the last change applied (0 before any).
    public var sequence: UInt64 {
        lock.withReadLock { lastSequence }
    }

    /// A consistent copy of the whole state, for a snapshot. `atCapture` runs while no change can happen,
    /// with the number of the last change the image includes (the journal starts a new log file there).
    /// Costs a few copies of references, not of the data: checks and writes go on while the image is
    /// written out.
    public func image(atCapture: (UInt64) -> Void = { _ in }) -> StoreImage {
        lock.withReadLock {
            atCapture(lastSequence)
            return state.image(sequence: lastSequence)
        }
    }

    /// Makes room in the indexes for `count` more memberships than the store holds, so that replaying
    /// that many creations grows no hash table on the way (a restart knows how many records its log holds).
    public func reserveCapacity(forAdditionalMemberships count: Int) {
        lock.withWriteLock { state.reserveIndexes(forMemberships: state.memberships.count + count) }
    }

    /// Applies a change read back from the log during recovery (it is not recorded again).
    /// - Throws: `StoreError.inconsistentReplay` when `sequence` does not follow the last one or the change
    ///   contradicts the state.
    /// - Parameter announcing: build the change's notice for watchers (a cluster replaying another node's
    ///   change); returned when it touched memberships.
    /// - Parameter upcoming: a change to be replayed a little later (a few records ahead in the log), whose
    ///   index entries start loading now (`StoreState.prefetchEntries`); only a hint.
    @discardableResult
    public func replay(
        _ change: StoreChange, context: ChangeContext, sequence: UInt64, announcing: Bool = false, upcoming: StoreChange? = nil
    ) throws(StoreError) -> AccessNotice? {
        try lock.withWriteLock { () throws(StoreError) -> AccessNotice? in
            if let upcoming { state.prefetchEntries(of: upcoming) }
            guard sequence == lastSequence + 1 else {
                throw .inconsistentReplay("change \(sequence) follows change \(lastSequence)")
            }
            switch change {
            case .create(let membership, _):
                guard membership.id.bits != nil else {
                    throw .inconsistentReplay("change \(sequence) creates membership \(membership.id), which is not a membership id")
                }
                if state.containsMembership(withID: membership.id) {
                    throw .inconsistentReplay("change \(sequence) creates membership \(membership.id), which exists")
                }
            case .event(let event, let result):
                guard let existing = state.existingMembership(withID: result.id) else {
                    throw .inconsistentReplay("change \(sequence) applies event \(event.id) to membership \(result.id), which does not exist")
                }
                guard existing.user == result.user, existing.device == result.device else {
                    throw .inconsistentReplay("change \(sequence) moves membership \(result.id) to another subject with an event")
                }
            case .transfer(let id, _):
                guard state.containsMembership(withID: id) else {
                    throw .inconsistentReplay("change \(sequence) transfers membership \(id), which does not exist")
                }
            case .extend(let id, _):
                guard let existing = state.existingMembership(withID: id) else {
                    throw .inconsistentReplay("change \(sequence) extends membership \(id), which does not exist")
                }
                guard existing.expiresAt != nil else {
                    throw .inconsistentReplay("change \(sequence) extends membership \(id), which never expires")
                }
            case .claim, .revoke, .define, .undefine, .erase:
                break
            }
            lastSequence = sequence
            return applyAnnouncing(change, context: context, sequence: sequence, plannedErasure: nil, announcing: announcing)
        }
    }

    /// Records and applies `change` made in `context`; the caller holds the write lock. `plannedErasure`
    /// is the plan of an erasure made under the same lock (`StoreState.apply`). Returns the change's
    /// notice when `announcing`.
    func commit(
        _ change: StoreChange, context: ChangeContext, plannedErasure: StoreState.ErasurePlan? = nil, announcing: Bool = false
    ) throws(StoreError) -> AccessNotice? {
        let sequence = lastSequence + 1
        if let journal {
            do {
                try journal.record(change, context: context, sequence: sequence)
            } catch {
                throw .changesUnavailable(reason: error.reason)
            }
        }
        lastSequence = sequence
        return applyAnnouncing(change, context: context, sequence: sequence, plannedErasure: plannedErasure, announcing: announcing)
    }

    /// Applies `change` as number `sequence` (the caller holds the write lock and has set `lastSequence`),
    /// and builds its notice when `announcing`.
    func applyAnnouncing(
        _ change: StoreChange, context: ChangeContext, sequence: UInt64, plannedErasure: StoreState.ErasurePlan?, announcing: Bool
    ) -> AccessNotice? {
        defer { noteNextAccessEnd() }
        guard announcing else {
            state.apply(change, context: context, sequence: sequence, plannedErasure: plannedErasure)
            return nil
        }
        var plan = plannedErasure
        if case .erase(let user, let device) = change, plan == nil { plan = state.erasurePlan(user: user, device: device) }
        let basis = state.noticeBasis(for: change, plannedErasure: plan)
        state.apply(change, context: context, sequence: sequence, plannedErasure: plan)
        return state.notice(for: change, sequence: sequence, context: context, basis: basis)
    }
}

// MARK: Reads

extension EntitlementStore {
    /// Whether `query.subject` has access matching `query.filter` at `query.moment` (now if `nil`).
    ///
    /// This is the hot path: a shared lock, one to three dictionary lookups (user, device, entitlement),
    /// a scan of the subject's few 16-byte access records, no allocation, no reference counting.
    /// - Throws: `StoreError.unknownEntitlement` when the filter names an entitlement the catalog lacks.
    ///
    /// A moment before the newest change sees the memberships as they were then
    /// (`StoreState.access(_:asOf:)`); a later
    /// one, now included, sees them as they are, on this path.
    public func check(_ query: AccessQuery) throws(StoreError) -> AccessResult {
        let moment = (query.moment ?? clock()).millisecondsSinceEpoch
        return try lock.withReadLock { () throws(StoreError) -> AccessResult in
            // A client's "now" a little behind the server's is the present too, unless something changed
            // in between.
            if moment < state.newestChangeTime { return try state.access(query, asOf: Timestamp(millisecondsSinceEpoch: moment)) }
            var found = false
            var latestExpiry = Int64.min
            func consider(_ record: AccessRecord) -> Bool {
                guard record.isActive(at: moment) else { return true }
                found = true
                latestExpiry = max(latestExpiry, record.expiresAt)
                return latestExpiry != .max  // lifetime access: nothing can last longer
            }
            switch query.filter {
            case .anyProduct:
                state.forEachVisibleAccess(of: query.subject) { consider($0) }
            case .product(let productId):
                // A product no membership ever named cannot be held.
                guard let product = state.productCode(of: productId) else { return .inactive }
                state.forEachVisibleAccess(of: query.subject) { $0.product == product ? consider($0) : true }
            case .entitlement(let name):
                guard let products = state.products(unlocking: name) else { throw .unknownEntitlement(name) }
                state.forEachVisibleAccess(of: query.subject) { products.unlocks($0.product) ? consider($0) : true }
            }
            guard found else { return .inactive }
            return .active(until: latestExpiry == .max ? nil : Timestamp(millisecondsSinceEpoch: latestExpiry))
        }
    }

    /// Every membership `subject` can see, active or not, newest first.
    public func memberships(visibleTo subject: Subject) -> [Membership] {
        lock.withReadLock {
            state.visibleSlots(of: subject).map { state.memberships[$0] }
        }
    }

    /// The memberships holding the store transaction `id` (a grant's `transactionId`, or an event's),
    /// newest first. Erased memberships are not found.
    public func memberships(withTransactionID id: String) -> [Membership] {
        lock.withReadLock { state.slots(ofTransaction: id).reversed().map { state.memberships[$0] } }
    }

    /// The memberships of the subscription whose first transaction is `id` (their transactions'
    /// `originalTransactionId`), newest first. Normally one: a store's renewals, upgrades and refunds of
    /// a subscription all apply to the membership its first grant created.
    public func memberships(withOriginalTransactionID id: String) -> [Membership] {
        lock.withReadLock { state.slots(ofOriginalTransaction: id).reversed().map { state.memberships[$0] } }
    }

    /// The membership with this id, if there is one.
    public func membership(withID id: MembershipID) -> Membership? {
        lock.withReadLock { state.membership(withID: id) }
    }

    /// The catalog: every entitlement with the products that unlock it, sorted by entitlement name.
    public func catalog() -> [(entitlement: String, products: [String])] {
        lock.withReadLock {
            state.catalog.sorted { $0.key < $1.key }.map { (entitlement: $0.key, products: $0.value.sorted) }
        }
    }

    /// How much the store holds, read at one moment.
    public var sizes: StoreSizes {
        lock.withReadLock {
            StoreSizes(
                users: state.userCount, devices: state.deviceCount, memberships: state.memberships.count - state.erasedCount,
                entitlements: state.catalog.count
            )
        }
    }

    /// How many memberships the store holds, revoked and expired ones included (erased ones not).
    public var membershipCount: Int {
        lock.withReadLock { state.memberships.count - state.erasedCount }
    }
}
