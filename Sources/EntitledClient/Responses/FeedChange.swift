/// One item of the change feed (Protocol/PROTOCOL.md, `changes`): what one change did to one membership,
/// to the catalog, or that a person was erased. The items of one change (a claim that moved several
/// memberships) share its `sequence`.
public struct FeedChange: Sendable, Hashable {
    /// The change's number: read on after it (`EntitledRequest.changes(afterSeq:)`).
    public var sequence: UInt64
    /// Its audit entry: when, by whom, why, what (`action`) and what it left behind (`membership`,
    /// `entitlement` and `products`, or `erased`).
    public var entry: HistoryEntry
    /// For a transfer: whom the membership was taken from.
    public var formerOwner: (user: String?, device: String?)? {
        guard let owner = json["formerOwner"] else { return nil }
        return (owner["user"]?.stringValue, owner["device"]?.stringValue)
    }
    /// For an erasure: the ids of the memberships it removed (delete them from any copy) and of the other
    /// users' memberships that lost the erased device (take the device off them).
    public var erasedMemberships: [String] { json["erasedMemberships"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    public var detachedMemberships: [String] { json["detachedMemberships"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    /// The item as the server wrote it: what a webhook passes on whole.
    public var json: JSONValue

    /// Reads an item; `nil` when it has no change number or is no audit entry.
    public init?(json: JSONValue) {
        guard let sequence = json["sequence"]?.intValue, sequence > 0, let entry = HistoryEntry(json: json) else { return nil }
        self.sequence = UInt64(sequence)
        self.entry = entry
        self.json = json
    }

    public static func == (lhs: FeedChange, rhs: FeedChange) -> Bool { lhs.json == rhs.json }
    public func hash(into hasher: inout Hasher) { hasher.combine(json) }
}

/// A page of the change feed, as `changes` answers it.
public struct FeedPageInfo: Sendable, Hashable {
    /// The changes after the page's `afterSeq`, oldest first.
    public var changes: [FeedChange]
    /// The `afterSeq` of the next read.
    public var next: UInt64
    /// The newest change the page could show: when `next` is below it, read on at once.
    public var newest: UInt64
    /// The oldest `afterSeq` the server accepts now.
    public var oldestAfterSeq: UInt64

    /// Whether more changes are there to read now.
    public var hasMore: Bool { next < newest }

    public init?(response: EntitledResponse) {
        guard let items = response["changes"]?.arrayValue, let next = response["next"]?.intValue, let newest = response["newest"]?.intValue,
            let oldest = response["oldestAfterSeq"]?.intValue
        else { return nil }
        self.changes = items.compactMap(FeedChange.init(json:))
        self.next = UInt64(max(0, next))
        self.newest = UInt64(max(0, newest))
        self.oldestAfterSeq = UInt64(max(0, oldest))
    }
}

extension EntitledResponse {
    /// The page of a `changes` response.
    public var feedPage: FeedPageInfo? { FeedPageInfo(response: self) }
}
