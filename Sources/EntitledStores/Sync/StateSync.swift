import EntitledClient

/// Why `entitled` is being brought to a store's state as its API tells it now, rather than to a
/// notification: an import (a subscriber who predates `entitled`) or a reconciliation (a notification may
/// have been missed). It names the writes: the audit trail's `reason` is `import` or `reconciliation`, and
/// event ids are made from the store's own identifiers and the state's version, so that bringing the same
/// state twice writes nothing the second time, and a later state writes anew.
public struct StateSync: Sendable, Hashable {
    public enum Purpose: String, Sendable, Hashable {
        case `import`
        case reconciliation
    }

    public var purpose: Purpose
    /// When the store was asked (milliseconds since the epoch): the time of events that describe the state
    /// now (a cancellation noticed, an expiry), since the store does not date them.
    public var now: Int64

    public init(_ purpose: Purpose, now: Int64) {
        self.purpose = purpose
        self.now = now
    }

    /// The audit trail's reason.
    public var reason: String { purpose.rawValue }

    /// An event id: `import:app_store:<original>:renewal:<transaction>`.
    public func eventID(store: String, subscription: String, kind: EntitledEventName, version: String) -> String {
        "\(purpose.rawValue):\(store):\(subscription):\(kind.rawValue):\(version)"
    }

    public var time: String { ProtocolTime.string(milliseconds: now) }
}

/// What bringing one subscription to its store's state did.
public struct StateSyncOutcome: Sendable, Hashable {
    public var outcome: NotificationOutcome
    public var membership: MembershipInfo?
    /// The events written (their types), for the reconciliation's drift by kind.
    public var changes: [String]
    /// What the store could not give, said in the import's report.
    public var notes: [String]

    public init(outcome: NotificationOutcome, membership: MembershipInfo?, changes: [String] = [], notes: [String] = []) {
        self.outcome = outcome
        self.membership = membership
        self.changes = changes
        self.notes = notes
    }
}

extension EntitledRequest {
    /// A grant of a purchase made before `entitled` knew it: its original purchase time and the renewals
    /// before the import whose times the source does not give.
    func imported(purchasedAt: Int64?, renewsCount: Int?) -> EntitledRequest {
        var request = self
        if let purchasedAt { request.fields.append(("purchasedAt", .string(ProtocolTime.string(milliseconds: purchasedAt)))) }
        if let renewsCount, renewsCount > 0 { request.fields.append(("renewsCount", .number(String(renewsCount)))) }
        return request
    }
}
