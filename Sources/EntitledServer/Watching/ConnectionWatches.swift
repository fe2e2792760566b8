import EntitledCore
import EntitledWire

/// What one connection watches, kept on its loop's thread. Nothing here grows with the store: when access
/// ends by itself, the store's own schedule says so (`EntitlementStore.takeAccessEnds`), and the
/// `WatchHub` finds the watchers.
struct ConnectionWatches {
    private(set) var subjects: Set<Subject> = []
    private(set) var everything = false

    /// How many watches: each subject, and `all`.
    var count: Int { subjects.count + (everything ? 1 : 0) }

    var keys: WatchKeys {
        WatchKeys(
            users: Set(subjects.compactMap(\.user)), devices: Set(subjects.compactMap(\.device)), everything: everything
        )
    }

    /// Adds `target`; returns whether it is new.
    @discardableResult
    mutating func add(_ target: WatchTarget) -> Bool {
        switch target {
        case .all:
            defer { everything = true }
            return !everything
        case .subject(let subject):
            return subjects.insert(subject).inserted
        }
    }

    /// Removes `target`, or every watch when `nil`.
    mutating func remove(_ target: WatchTarget?) {
        switch target {
        case .all: everything = false
        case .subject(let subject): subjects.remove(subject)
        case nil:
            subjects.removeAll()
            everything = false
        }
    }

    /// Whether a change of `membership` concerns these watches: every subject is watched, or its user or
    /// the device it was bought on is.
    func covers(_ membership: Membership) -> Bool {
        covers(owner: Subject(user: membership.user, device: membership.device))
    }

    /// Whether a membership of `owner` (its user and device) concerns these watches.
    func covers(owner: Subject?) -> Bool {
        if everything { return true }
        guard let owner else { return false }
        return subjects.contains { subject in
            (subject.user != nil && subject.user == owner.user) || (subject.device != nil && subject.device == owner.device)
        }
    }
}
