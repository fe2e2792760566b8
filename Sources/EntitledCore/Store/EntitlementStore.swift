/// The in-memory store of memberships and the entitlement catalog: the source of truth for every read.
///
/// Safe to use from any thread. Reads (checks, listings) run concurrently under a shared lock and do not
/// wait for each other, only for a write; writes take the lock alone for the few microseconds a change
/// needs (and go before readers that arrive after them, so checks cannot starve a grant). The store
/// reads time from the clock it was given, so tests can fix "now".
public final class EntitlementStore: Sendable {
    private let lock = ReadWriteLock()
    // Guarded by `lock`: only touched inside `lock.withReadLock` / `lock.withWriteLock`.
    nonisolated(unsafe) private var state = StoreState()
    private let clock: @Sendable () -> Timestamp

    /// A store that reads the current time from `clock` (the system clock by default).
    public init(clock: @escaping @Sendable () -> Timestamp = { Timestamp.now() }) {
        self.clock = clock
    }

    /// The current time by this store's clock.
    public func now() -> Timestamp { clock() }
}

// MARK: Reads

extension EntitlementStore {
    /// Whether `query.subject` has access matching `query.filter` at `query.moment` (now if `nil`).
    ///
    /// This is the hot path: a shared lock, one to three dictionary lookups (user, device, entitlement),
    /// a scan of the subject's few memberships, no allocation.
    /// - Throws: `StoreError.unknownEntitlement` when the filter names an entitlement the catalog lacks.
    public func check(_ query: AccessQuery) throws(StoreError) -> AccessResult {
        let moment = query.moment ?? clock()
        return try lock.withReadLock { () throws(StoreError) -> AccessResult in
            var found = false
            var latestExpiry: Timestamp? = nil
            func consider(_ membership: borrowing Membership) -> Bool {
                guard membership.isActive(at: moment) else { return true }
                guard let expiresAt = membership.expiresAt else {
                    found = true
                    latestExpiry = nil
                    return false  // lifetime access: nothing can last longer
                }
                if !found || expiresAt > latestExpiry! { latestExpiry = expiresAt }
                found = true
                return true
            }
            switch query.filter {
            case .anyProduct:
                state.forEachVisibleMembership(of: query.subject) { consider($0) }
            case .product(let productId):
                state.forEachVisibleMembership(of: query.subject) { membership in
                    membership.productId == productId ? consider(membership) : true
                }
            case .entitlement(let name):
                guard let products = state.catalog[name] else { throw .unknownEntitlement(name) }
                state.forEachVisibleMembership(of: query.subject) { membership in
                    products.unlocks(membership.productId) ? consider(membership) : true
                }
            }
            return found ? .active(until: latestExpiry) : .inactive
        }
    }

    /// Every membership `subject` can see, active or not, newest first.
    public func memberships(visibleTo subject: Subject) -> [Membership] {
        lock.withReadLock {
            state.visibleSlots(of: subject).map { state.memberships[$0] }
        }
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

    /// How many memberships the store holds, revoked and expired ones included.
    public var membershipCount: Int {
        lock.withReadLock { state.memberships.count }
    }
}

// MARK: Writes

extension EntitlementStore {
    /// Creates a membership for `grant` and returns it. It is visible to every read that starts after
    /// this returns.
    public func grant(_ grant: Grant) -> Membership {
        var generator = SystemRandomNumberGenerator()
        return lock.withWriteLock {
            // Read the clock under the lock, so that creation order and `createdAt` order agree.
            let createdAt = clock()
            let expiresAt: Timestamp?
            switch grant.expiry {
            case .lifetime: expiresAt = nil
            case .at(let moment): expiresAt = moment
            case .after(let span): expiresAt = createdAt.adding(span)
            }
            var id = MembershipID.random(using: &generator)
            while state.membership(withID: id) != nil {
                id = MembershipID.random(using: &generator)
            }
            let membership = Membership(
                id: id,
                productId: grant.productId,
                planId: grant.planId,
                device: grant.subject.device,
                user: grant.subject.user,
                createdAt: createdAt,
                expiresAt: expiresAt,
                source: grant.source
            )
            state.apply(.create(membership))
            return membership
        }
    }

    /// Gives every unclaimed membership bought on `device` to `user` (the SDKs' `logIn(appUserId:)`) and
    /// returns how many moved. Memberships another user already claimed stay with that user, so a repeated
    /// claim moves nothing and returns 0.
    public func claim(device: String, user: String) -> Int {
        lock.withWriteLock { state.apply(.claim(device: device, user: user)) }
    }

    /// Revokes a membership and returns it. Revoking a revoked membership changes nothing and returns it
    /// as it is, with its first revocation time and reason.
    /// - Parameter reason: free text such as `refund` or `chargeback`; `Revocation.defaultReason` if `nil`.
    /// - Throws: `StoreError.unknownMembership` when no membership has this id.
    public func revoke(_ id: MembershipID, reason: String?) throws(StoreError) -> Membership {
        try lock.withWriteLock { () throws(StoreError) -> Membership in
            guard let existing = state.membership(withID: id) else { throw .unknownMembership(id) }
            guard existing.revocation == nil else { return existing }
            let revocation = Revocation(revokedAt: clock(), reason: reason ?? Revocation.defaultReason)
            state.apply(.revoke(id, revocation))
            return state.membership(withID: id)!
        }
    }

    /// Sets the products that unlock `entitlement`, replacing any it had, and returns them as stored
    /// (sorted, without duplicates). An empty list keeps the entitlement defined with nothing unlocking it.
    @discardableResult
    public func define(entitlement: String, products: [String]) -> [String] {
        lock.withWriteLock {
            state.apply(.define(entitlement: entitlement, products: products))
            return state.catalog[entitlement]?.sorted ?? []
        }
    }
}
