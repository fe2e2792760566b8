import EntitledClient

extension AppStoreServerAPI {
    /// Get All Subscription Statuses (`GET /inApps/v1/subscriptions/{transactionId}`,
    /// https://developer.apple.com/documentation/appstoreserverapi/get-all-subscription-statuses): the
    /// statuses of every subscription of the customer who made `transactionID` (any transaction of theirs,
    /// an original one or not), in production, else in the sandbox.
    /// - Throws: `notFound` (storeCode `4040010`) when neither environment knows the transaction.
    public func subscriptionStatuses(transactionID: String) async throws(StoreAPIError) -> AppStoreSubscriptionStatuses {
        let call = StoreCall(store: Self.store, name: "Get All Subscription Statuses", identifier: transactionID)
        return try await productionThenSandbox(call) { (environment) async throws(StoreAPIError) in
            let json = try await self.call(call, environment, path: "/inApps/v1/subscriptions/\(StoreHTTP.escaped(transactionID))")
            if let bundle = json["bundleId"]?.stringValue, bundle != settings.bundleID {
                throw StoreAPIError(call, .malformed, "the answer is for bundle \(bundle), not \(settings.bundleID)")
            }
            var groups: [AppStoreSubscriptionStatuses.Group] = []
            for (index, group) in (json["data"]?.arrayValue ?? []).enumerated() {
                var last: [AppStoreSubscriptionStatuses.LastTransaction] = []
                for (item, entry) in (group["lastTransactions"]?.arrayValue ?? []).enumerated() {
                    let place = "data[\(index)].lastTransactions[\(item)]"
                    guard let original = entry["originalTransactionId"]?.stringValue, let status = entry["status"]?.intValue else {
                        throw StoreAPIError(call, .malformed, "\(place) lacks originalTransactionId or status")
                    }
                    let transaction = try await verified(entry["signedTransactionInfo"], what: "\(place).signedTransactionInfo", call, isTransaction: true)
                    let renewal =
                        entry["signedRenewalInfo"] == nil
                        ? nil : try await verified(entry["signedRenewalInfo"], what: "\(place).signedRenewalInfo", call)
                    last.append(.init(originalTransactionID: original, status: status, transaction: transaction, renewal: renewal))
                }
                groups.append(.init(subscriptionGroupIdentifier: group["subscriptionGroupIdentifier"]?.stringValue ?? "", lastTransactions: last))
            }
            return AppStoreSubscriptionStatuses(
                environment: Self.environment(of: json, asked: environment), appAppleID: json["appAppleId"]?.intValue, groups: groups
            )
        }
    }
}
