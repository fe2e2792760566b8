/// Size limits of the domain, enforced where input enters (the wire codec) and documented in PROTOCOL.md.
public enum Limits {
    /// The longest user, device, product, plan, entitlement or membership id, in UTF-8 bytes.
    public static let maximumIdentifierBytes = 256
    /// The most products one entitlement may list.
    public static let maximumProductsPerEntitlement = 1000
    /// The longest reason (a revocation's, or any change's for the audit trail), in UTF-8 bytes.
    public static let maximumReasonBytes = 256
    /// The audit entries a `history` request returns unless it gives a `limit`.
    public static let defaultHistoryEntries = 100
    /// The most audit entries one `history` request returns.
    public static let maximumHistoryEntries = 1000
    /// The memberships a `memberships` request returns unless it gives a `limit`.
    public static let defaultMembershipsPerPage = 100
    /// The changes a read of the change feed (`changes`) returns unless it gives a `limit`.
    public static let defaultFeedItems = 100
    /// The most items one read of the change feed returns (a change's items are never split, so the last
    /// change of a page may add a few more); `next` continues.
    public static let maximumFeedItems = 1000
    /// The most memberships one `memberships` request returns; `next` continues the listing.
    public static let maximumMembershipsPerPage = 1000
    /// The most slots one page of a listing of a source's memberships (`memberships` with `source`) looks
    /// at: a page costs at most this many reads of a few bytes in place (no `Membership` is built for a
    /// slot it passes over) plus the at most 1000 memberships it takes, however few it finds, in a store
    /// of any size. Not measured on the reference machine yet; by construction, the same order as a full
    /// page of a subject's memberships, which builds 1000.
    public static let maximumSlotsPerSourcePage = 20_000
    /// The most renewals an imported grant may say the store made before (`renewsCount`).
    public static let maximumImportedRenewals = 100_000
    /// The most memberships a read may go through one by one for one subject: `customer`, `history` of a
    /// subject, and `check` or `memberships` at a moment before the newest change. Their cost grows with
    /// the subject's size and they run on a serving loop, so this bounds how long one of them holds the
    /// loop (about 10 ms at this size on the reference machine, see OPERATIONS.md); a subject with more is
    /// refused with `over_limit` rather than stalling every other connection of that loop. Listing the
    /// memberships (paged) and checking now are never refused: they cost about 4 ns a membership.
    public static let maximumMembershipsPerSubjectRead = 10_000
    /// The most recorded changes (audit entries: renewals, revocations, claims, ...) of one subject's
    /// memberships that such a read may go through, besides the memberships themselves: `history`, and
    /// `check` or `memberships` at an earlier moment, read them too.
    public static let maximumChangesPerSubjectRead = 100_000
    /// How far ahead of the store's clock an event's `eventTime` may be (clock skew between the store that
    /// sent it and this server); later events are refused.
    public static let maximumEventLead = TimeSpan.hours(1)
    /// The most lifecycle event ids a membership remembers for spotting duplicates; older ids are
    /// forgotten (an event that old is refused as out of order anyway, unless it shares the newest time).
    public static let rememberedEventIDs = 100
}
