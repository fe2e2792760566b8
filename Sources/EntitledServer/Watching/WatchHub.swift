import EntitledCore
import EntitledWire
import NIOConcurrencyHelpers

/// Which connections watch which subjects, shared by every loop: a write on one loop reaches watchers on
/// all of them. Each connection keeps its own watches (`ConnectionWatches`) and registers here the user
/// and device keys they cover; `publish` finds the connections a change concerns and posts the change
/// to each connection's own loop, where it is written.
final class WatchHub: Sendable {
    private struct Registry {
        var byUser: [String: [ObjectIdentifier: UncheckedConnection]] = [:]
        var byDevice: [String: [ObjectIdentifier: UncheckedConnection]] = [:]
        var everything: [ObjectIdentifier: UncheckedConnection] = [:]
        /// What each connection registered, to undo it.
        var keys: [ObjectIdentifier: WatchKeys] = [:]
        /// The users and devices registered, summed over the connections: what `maximumSubjectWatches` bounds.
        var subjectWatches = 0
        var maximumSubjectWatches = ServerConfiguration.defaultMaximumSubjectWatches
    }

    private let registry = NIOLockedValueBox(Registry())

    /// The most connections that may watch every subject at once: each is handed every change of every
    /// loop, so each costs every write a task on its loop.
    static let maximumEverythingWatchers = 16

    /// The most users and devices watched at once over all connections (`--max-watches`); lowering it
    /// takes no watch away, it refuses new ones until enough end.
    var maximumSubjectWatches: Int {
        get { registry.withLockedValue { $0.maximumSubjectWatches } }
        set { registry.withLockedValue { $0.maximumSubjectWatches = newValue } }
    }

    /// Why `register(_:for:)` refused new keys.
    enum Refusal: Error {
        case everythingWatchersFull
        case subjectWatchesFull(maximum: Int)

        var wireError: WireError {
            switch self {
            case .everythingWatchersFull:
                WireError(.overLimit, "\(WatchHub.maximumEverythingWatchers) connections watch every subject already; unwatch one of them first")
            case .subjectWatchesFull(let maximum):
                WireError(.overLimit, "the server holds \(maximum) watches of users and devices already (--max-watches); unwatch some first or retry later")
            }
        }
    }

    /// Whether any connection watches anything: writes build no notice while none does (it costs an
    /// allocation a write). A watch that arrives between a write and its publication misses that write,
    /// which happened before the watch began.
    var hasWatchers: Bool {
        registry.withLockedValue { !$0.keys.isEmpty }
    }

    /// Replaces what `connection` is registered for with `keys` (nothing, when `keys` is empty). Refuses,
    /// changing nothing, keys that would add a watch of every subject beyond `maximumEverythingWatchers`,
    /// or more users and devices than `maximumSubjectWatches`; fewer keys are always taken.
    func register(_ connection: ServedConnection, for keys: WatchKeys) throws(Refusal) {
        let identifier = ObjectIdentifier(connection)
        let handle = UncheckedConnection(connection)
        let refusal = registry.withLockedValue { registry -> Refusal? in
            if keys.everything, registry.everything[identifier] == nil, registry.everything.count >= Self.maximumEverythingWatchers {
                return .everythingWatchersFull
            }
            let old = registry.keys[identifier] ?? WatchKeys()
            if keys.subjectCount > old.subjectCount,
                registry.subjectWatches - old.subjectCount + keys.subjectCount > registry.maximumSubjectWatches
            {
                return .subjectWatchesFull(maximum: registry.maximumSubjectWatches)
            }
            // Only the keys that changed: a connection may hold a thousand, and every loop waits on this lock.
            registry.keys[identifier] = nil
            registry.subjectWatches += keys.subjectCount - old.subjectCount
            for user in old.users.subtracting(keys.users) {
                registry.byUser[user]?.removeValue(forKey: identifier)
                if registry.byUser[user]?.isEmpty == true { registry.byUser[user] = nil }
            }
            for device in old.devices.subtracting(keys.devices) {
                registry.byDevice[device]?.removeValue(forKey: identifier)
                if registry.byDevice[device]?.isEmpty == true { registry.byDevice[device] = nil }
            }
            if !keys.everything { registry.everything.removeValue(forKey: identifier) }
            guard !keys.isEmpty else { return nil }
            registry.keys[identifier] = keys
            for user in keys.users.subtracting(old.users) { registry.byUser[user, default: [:]][identifier] = handle }
            for device in keys.devices.subtracting(old.devices) { registry.byDevice[device, default: [:]][identifier] = handle }
            if keys.everything { registry.everything[identifier] = handle }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Ends every watch of `connection` (it closed, or lost its role); never refused.
    func unregister(_ connection: ServedConnection) {
        try? register(connection, for: WatchKeys())
    }

    /// Posts `notice` to every connection watching one of its memberships' user or device (or every
    /// subject), on that connection's loop. Costs one uncontended lock when nobody watches.
    func publish(_ notice: AccessNotice) {
        post(cause: notice.cause, memberships: notice.memberships, sequence: notice.sequence, formerOwner: notice.formerOwner)
    }

    /// Posts `expired` for `memberships`, whose access stopped by itself (`EntitlementStore.takeAccessEnds`),
    /// to every connection watching one of them.
    func publishAccessEnded(_ memberships: [Membership]) {
        post(cause: "expired", memberships: memberships, sequence: nil, formerOwner: nil)
    }

    private func post(cause: String, memberships: [Membership], sequence: UInt64?, formerOwner: Subject?) {
        let deliveries = registry.withLockedValue { registry -> [ObjectIdentifier: (UncheckedConnection, [Membership])] in
            var deliveries: [ObjectIdentifier: (UncheckedConnection, [Membership])] = [:]
            guard !registry.keys.isEmpty else { return deliveries }
            for membership in memberships {
                func deliver(to watchers: [ObjectIdentifier: UncheckedConnection]?) {
                    for (identifier, connection) in watchers ?? [:] {
                        // Matched through its user and its device: told once.
                        if deliveries[identifier]?.1.last?.id == membership.id { continue }
                        // In place: a copy out and back would copy the list once per membership.
                        deliveries[identifier, default: (connection, [])].1.append(membership)
                    }
                }
                deliver(to: registry.everything)
                if let user = membership.user { deliver(to: registry.byUser[user]) }
                if let device = membership.device { deliver(to: registry.byDevice[device]) }
                if let former = formerOwner?.user { deliver(to: registry.byUser[former]) }
                if let former = formerOwner?.device { deliver(to: registry.byDevice[former]) }
            }
            return deliveries
        }
        for (connection, memberships) in deliveries.values {
            connection.value.loop.execute {
                connection.value.deliver(cause: cause, memberships: memberships, sequence: sequence, formerOwner: formerOwner)
            }
        }
    }
}

/// The user and device ids a connection's watches cover, and whether it watches every subject.
struct WatchKeys: Equatable {
    var users: Set<String> = []
    var devices: Set<String> = []
    var everything = false

    var isEmpty: Bool { users.isEmpty && devices.isEmpty && !everything }

    /// The users and devices: what a connection adds to `WatchHub.maximumSubjectWatches`.
    var subjectCount: Int { users.count + devices.count }
}
