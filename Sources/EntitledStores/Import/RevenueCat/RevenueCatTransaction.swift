import EntitledClient

/// One row of a RevenueCat transactions export (Scheduled Data Exports, "Transactions feed"; columns as
/// https://www.revenuecat.com/docs/integrations/scheduled-data-exports/transactions lists them): one store
/// transaction (a purchase or a renewal) as RevenueCat last saw it. Only what an import needs is kept.
public struct RevenueCatTransaction: Sendable, Hashable {
    /// The app's user: `rc_last_seen_app_user_id_alias` unless it is anonymous, else `rc_original_app_user_id`.
    public var user: String
    /// Whether the user is RevenueCat's anonymous id (`$RCAnonymousID:...`): a customer who never logged in.
    public var isAnonymous: Bool
    public var product: String
    /// `app_store`, `play_store`, `stripe`, `amazon`, `promotional`, `rc_billing`, ...
    public var store: String
    /// `store_transaction_id`: the App Store's transaction id, Google Play's order id, Stripe's invoice.
    public var transactionID: String
    /// `original_store_transaction_id`: the subscription's first transaction (App Store) or order id.
    public var originalTransactionID: String
    /// Milliseconds since the epoch.
    public var startsAt: Int64
    public var endsAt: Int64?
    public var gracePeriodEndsAt: Int64?
    public var refundedAt: Int64?
    public var unsubscribeDetectedAt: Int64?
    public var billingIssueDetectedAt: Int64?
    public var isAutoRenewable: Bool
    public var isTrial: Bool
    public var isSandbox: Bool
    public var isFamilyShared: Bool
    /// `renewal_number`: 1 for the first purchase ("Always starts at 1. Trial conversions are counted as renewals").
    public var renewalNumber: Int?

    /// The export's columns this reader needs; a file without one of them is refused, naming it.
    static let requiredColumns = [
        "rc_original_app_user_id", "product_identifier", "store", "start_time", "store_transaction_id", "original_store_transaction_id",
    ]

    /// Reads one row, given the header's positions; `nil` with the reason for a row that cannot be used.
    init(_ row: [String], columns: [String: Int]) throws(RevenueCatExport.RowFailure) {
        func text(_ name: String) -> String? {
            guard let index = columns[name], index < row.count else { return nil }
            let value = row[index].trimmingCharacters(in: .whitespaces)
            return value.isEmpty || value.lowercased() == "null" ? nil : value
        }
        func required(_ name: String) throws(RevenueCatExport.RowFailure) -> String {
            guard let value = text(name) else { throw .init("\(name) is empty") }
            return value
        }
        func time(_ name: String) throws(RevenueCatExport.RowFailure) -> Int64? {
            guard let value = text(name) else { return nil }
            guard let milliseconds = Self.milliseconds(value) else { throw .init("\(name) \"\(value)\" is not a time") }
            return milliseconds
        }
        // Booleans: `t`/`f` before version 4, `true`/`false` since (Data Export Version 4 change log).
        func flag(_ name: String) -> Bool {
            switch text(name)?.lowercased() {
            case "t", "true", "1", "yes": true
            default: false
            }
        }
        let original = try required("rc_original_app_user_id")
        let alias = text("rc_last_seen_app_user_id_alias")
        if let alias, !Self.isAnonymousID(alias) {
            user = alias
        } else {
            user = original
        }
        isAnonymous = Self.isAnonymousID(user)
        product = try required("product_identifier")
        store = try required("store").lowercased()
        transactionID = try required("store_transaction_id")
        originalTransactionID = try required("original_store_transaction_id")
        guard let start = try time("start_time") else { throw .init("start_time is empty") }
        startsAt = start
        endsAt = try time("end_time")
        gracePeriodEndsAt = try time("grace_period_end_time")
        refundedAt = try time("refunded_at")
        unsubscribeDetectedAt = try time("unsubscribe_detected_at")
        billingIssueDetectedAt = try time("billing_issues_detected_at")
        isAutoRenewable = flag("is_auto_renewable")
        isTrial = flag("is_trial_period")
        isSandbox = flag("is_sandbox")
        isFamilyShared = text("ownership_type")?.uppercased() == "FAMILY_SHARED"
        renewalNumber = text("renewal_number").flatMap { Int($0) }
    }

    static func isAnonymousID(_ id: String) -> Bool { id.hasPrefix("$RCAnonymousID:") }

    /// The export's times are UTC ("All dates and times are in UTC"), written `2023-01-31 12:00:00` or
    /// with a `T`, fractions and a zone; a time without a zone is taken as UTC.
    static func milliseconds(_ text: String) -> Int64? {
        var text = text
        if text.count > 10, let space = text.firstIndex(of: " "), text.distance(from: text.startIndex, to: space) == 10 {
            text.replaceSubrange(space...space, with: "T")
        }
        if let parsed = ProtocolTime.milliseconds(text) { return parsed }
        return ProtocolTime.milliseconds(text + "Z")
    }
}
