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
    /// How far ahead of the store's clock an event's `eventTime` may be (clock skew between the store that
    /// sent it and this server); later events are refused.
    public static let maximumEventLead = TimeSpan.hours(1)
    /// The most lifecycle event ids a membership remembers for spotting duplicates; older ids are
    /// forgotten (an event that old is refused as out of order anyway, unless it shares the newest time).
    public static let rememberedEventIDs = 100
}
