/// One page of an audit trail, newest first.
public struct HistoryPage: Sendable {
    /// At most the page's limit, newest first.
    public var entries: [AuditEntry]
    /// Where the next page starts (its request's `after`); `nil` when this page is the last.
    public var next: HistoryCursor?

    public init(entries: [AuditEntry], next: HistoryCursor?) {
        self.entries = entries
        self.next = next
    }
}
