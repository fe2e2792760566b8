/// One item of the change feed: what one change did to one membership, to the catalog, or that a person
/// was erased. Items of one change (a claim that moved several memberships) share its `sequence`.
public struct FeedItem: Hashable, Sendable {
    /// The change, as its audit entry shows it (`sequence` always set): who made it, when, why, and what
    /// it left behind (a membership with its status at the time, an entitlement's products, or what an
    /// erasure removed).
    public var entry: AuditEntry
    /// For a transfer: whom the membership was taken from (a user, or for a guest purchase its device).
    public var formerOwner: Subject?
    /// For an erasure: the ids of the memberships it erased, so that a copy can delete them. Nothing
    /// else about them, or about whom they belonged to, is left.
    public var erasedMemberships: [MembershipID]
    /// For an erasure: the ids of other users' memberships bought on the erased device, which lost the
    /// device, so that a copy can take it off them too.
    public var detachedMemberships: [MembershipID]

    public init(
        entry: AuditEntry, formerOwner: Subject? = nil, erasedMemberships: [MembershipID] = [], detachedMemberships: [MembershipID] = []
    ) {
        self.entry = entry
        self.formerOwner = formerOwner
        self.erasedMemberships = erasedMemberships
        self.detachedMemberships = detachedMemberships
    }

    /// The number of its change.
    public var sequence: UInt64 { entry.sequence ?? 0 }
}

/// A page of the change feed: the items after a change number, oldest first.
public struct FeedPage: Sendable {
    /// Whole changes only: a change's items are never split between two pages.
    public var items: [FeedItem]
    /// The `after` of the next page: the number of this page's last change, or, when the page read every
    /// change up to `newest`, `newest` (the changes numbered up to it that no item shows, such as a
    /// replayed grant's, changed nothing the feed tells).
    public var next: UInt64
    /// The newest change the page could have shown: nothing after it was looked at.
    public var newest: UInt64
    /// The oldest `after` a read may give now (`ChangeFeed.horizon - 1`): the feed holds every change
    /// after it.
    public var oldestAfter: UInt64

    public init(items: [FeedItem], next: UInt64, newest: UInt64, oldestAfter: UInt64) {
        self.items = items
        self.next = next
        self.newest = newest
        self.oldestAfter = oldestAfter
    }

    /// Whether changes after `next` exist up to `newest`: read on at once.
    public var hasMore: Bool { next < newest }
}
