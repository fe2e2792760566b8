import EntitledClient

/// One page of Get Transaction History (`HistoryResponse`,
/// https://developer.apple.com/documentation/appstoreserverapi/historyresponse): up to 20 of the
/// customer's transactions, oldest first, each verified and decoded (`JWSTransactionDecodedPayload`).
public struct AppStoreTransactionPage: Sendable, Hashable {
    public var environment: AppStoreServerAPI.Environment
    public var transactions: [JSONValue]
    /// Apple's token for the next page (`revision`).
    public var revision: String?
    public var hasMore: Bool

    /// Where the history continues, nil after the last page: pass it to `transactionHistory(transactionID:from:)`
    /// to resume.
    public var next: AppStoreServerAPI.HistoryPosition? {
        guard hasMore, let revision else { return nil }
        return .init(revision: revision, environment: environment)
    }
}
