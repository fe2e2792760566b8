import EntitledCore
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
    }

    private let registry = NIOLockedValueBox(Registry())

    /// Whether any connection watches anything: writes build no notice while none does (it costs an
    /// allocation a write). A watch that arrives between a write and its publication misses that write,
    /// which happened before the watch began.
    var hasWatchers: Bool {
        registry.withLockedValue { !$0.keys.isEmpty }
    }

    /// Replaces what `connection` is registered for with `keys` (nothing, when `keys` is empty).
    func register(_ connection: ServedConnection, for keys: WatchKeys) {
        let identifier = ObjectIdentifier(connection)
        let handle = UncheckedConnection(connection)
        registry.withLockedValue { registry in
            // Only the keys that changed: a connection may hold a thousand, and every loop waits on this lock.
            let old = registry.keys.removeValue(forKey: identifier) ?? WatchKeys()
            for user in old.users.subtracting(keys.users) {
                registry.byUser[user]?.removeValue(forKey: identifier)
                if registry.byUser[user]?.isEmpty == true { registry.byUser[user] = nil }
            }
            for device in old.devices.subtracting(keys.devices) {
                registry.byDevice[device]?.removeValue(forKey: identifier)
                if registry.byDevice[device]?.isEmpty == true { registry.byDevice[device] = nil }
            }
            if !keys.everything { registry.everything.removeValue(forKey: identifier) }
            guard !keys.isEmpty else { return }
            registry.keys[identifier] = keys
            for user in keys.users.subtracting(old.users) { registry.byUser[user, default: [:]][identifier] = handle }
            for device in keys.devices.subtracting(old.devices) { registry.byDevice[device, default: [:]][identifier] = handle }
            if keys.everything { registry.everything[identifier] = handle }
        }
    }

    /// Posts `notice` to every connection watching one of its memberships' user or device (or every
    /// subject), on that connection's loop. Costs one uncontended lock when nobody watches.
    func publish(_ notice: AccessNotice) {
        let deliveries = registry.withLockedValue { registry -> [ObjectIdentifier: (UncheckedConnection, [Membership])] in
            var deliveries: [ObjectIdentifier: (UncheckedConnection, [Membership])] = [:]
            guard !registry.keys.isEmpty else { return deliveries }
            for membership in notice.memberships {
                func deliver(to watchers: [ObjectIdentifier: UncheckedConnection]?) {
                    for (identifier, connection) in watchers ?? [:] {
                        var delivery = deliveries[identifier] ?? (connection, [])
                        // Matched through its user and its device: told once.
                        if delivery.1.last?.id != membership.id { delivery.1.append(membership) }
                        deliveries[identifier] = delivery
                    }
                }
                deliver(to: registry.everything)
                if let user = membership.user { deliver(to: registry.byUser[user]) }
                if let device = membership.device { deliver(to: registry.byDevice[device]) }
                if let former = notice.formerOwner?.user { deliver(to: registry.byUser[former]) }
                if let former = notice.formerOwner?.device { deliver(to: registry.byDevice[former]) }
            }
            return deliveries
        }
        let cause = notice.cause
        let sequence = notice.sequence
        let formerOwner = notice.formerOwner
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
}
