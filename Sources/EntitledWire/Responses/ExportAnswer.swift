import EntitledCore

/// What an `export` page answers (`Response.export`).
public struct ExportAnswer: Sendable {
    /// The change the copy is as of: follow the feed after it.
    public var sequence: UInt64
    /// When the copy was taken: statuses are computed then.
    public var moment: Timestamp
    /// The catalog as of `sequence`: on the first page only.
    public var catalog: [(entitlement: String, products: [String])]?
    /// The page's memberships, in creation order.
    public var memberships: [Membership]
    /// With `history`: the audit trail of the page's memberships (and, on the first page, of the catalog
    /// and the erasures); `nil` without.
    public var history: [AuditEntry]?
    /// Where the next page starts; `nil` on the last.
    public var next: ExportCursor?

    public init(
        sequence: UInt64, moment: Timestamp, catalog: [(entitlement: String, products: [String])]?, memberships: [Membership],
        history: [AuditEntry]?, next: ExportCursor?
    ) {
        self.sequence = sequence
        self.moment = moment
        self.catalog = catalog
        self.memberships = memberships
        self.history = history
        self.next = next
    }
}
