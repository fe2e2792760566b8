import EntitledClient

extension AppStoreServerAPI {
    /// One page of Get Transaction History, version 2 (`GET /inApps/v2/history/{transactionId}`,
    /// https://developer.apple.com/documentation/appstoreserverapi/get-transaction-history): the
    /// customer's transactions in ascending order (`sort=ASCENDING`), from `position` (nil: the first page,
    /// found in production, else in the sandbox).
    public func transactionHistoryPage(transactionID: String, from position: HistoryPosition? = nil) async throws(StoreAPIError) -> AppStoreTransactionPage {
        let call = StoreCall(store: Self.store, name: "Get Transaction History", identifier: transactionID)
        if let position { return try await historyPage(call, transactionID, position.environment, revision: position.revision) }
        return try await productionThenSandbox(call) { (environment) async throws(StoreAPIError) in
            try await historyPage(call, transactionID, environment, revision: nil)
        }
    }

    /// Every page of the customer's transaction history from `position` on, one at a time.
    public func transactionHistory(transactionID: String, from position: HistoryPosition? = nil) -> StorePages<AppStoreTransactionPage, HistoryPosition> {
        let call = StoreCall(store: Self.store, name: "Get Transaction History", identifier: transactionID)
        return StorePages(call, from: position) { (position) async throws(StoreAPIError) in
            let page = try await transactionHistoryPage(transactionID: transactionID, from: position)
            return (page, page.next)
        }
    }

    private func historyPage(_ call: StoreCall, _ transactionID: String, _ environment: Environment, revision: String?) async throws(StoreAPIError) -> AppStoreTransactionPage {
        var path = "/inApps/v2/history/\(StoreHTTP.escaped(transactionID))?sort=ASCENDING"
        if let revision { path += "&revision=\(StoreHTTP.escaped(revision))" }
        let json = try await self.call(call, environment, path: path)
        if let bundle = json["bundleId"]?.stringValue, bundle != settings.bundleID {
            throw StoreAPIError(call, .malformed, "the answer is for bundle \(bundle), not \(settings.bundleID)")
        }
        guard let signedTransactions = json["signedTransactions"]?.arrayValue, let hasMore = json["hasMore"]?.boolValue else {
            throw StoreAPIError(call, .malformed, "the answer lacks signedTransactions or hasMore")
        }
        var transactions: [JSONValue] = []
        transactions.reserveCapacity(signedTransactions.count)
        for (index, jws) in signedTransactions.enumerated() {
            transactions.append(try await verified(jws, what: "signedTransactions[\(index)]", call, isTransaction: true))
        }
        let next = json["revision"]?.stringValue
        if hasMore, next == nil { throw StoreAPIError(call, .malformed, "hasMore is true but the answer has no revision") }
        return AppStoreTransactionPage(environment: Self.environment(of: json, asked: environment), transactions: transactions, revision: next, hasMore: hasMore)
    }
}
