import EntitledClient
import Foundation

extension AppStoreServerAPI {
    /// How far back Get Notification History reaches: "Notification history is available for the past
    /// 180 days in the production environment, and the past 30 days in the sandbox environment"
    /// (https://developer.apple.com/documentation/appstoreserverapi/get-notification-history). An older
    /// `startDate` is refused with `StartDateTooFarInPastError` (4000012).
    public static func notificationHistoryWindow(_ environment: Environment) -> Duration {
        .seconds((environment == .production ? 180 : 30) * 86_400)
    }

    /// One page of Get Notification History (`POST /inApps/v1/notifications/history`,
    /// https://developer.apple.com/documentation/appstoreserverapi/get-notification-history): the
    /// notifications of `environment` sent from `start` to `end` (`NotificationHistoryRequest`'s
    /// `startDate` and `endDate`), optionally only those of one customer (`transactionID`) or only those
    /// whose delivery failed; `paginationToken` (query) for the pages after the first.
    /// - Throws: `refused` with storeCode `4000012` when `start` is older than the window kept.
    public func notificationHistoryPage(
        from start: Date, to end: Date, environment: Environment = .production, transactionID: String? = nil, onlyFailures: Bool = false,
        paginationToken: String? = nil
    ) async throws(StoreAPIError) -> AppStoreNotificationPage {
        let call = StoreCall(store: Self.store, name: "Get Notification History", identifier: paginationToken.map { "page \($0)" })
        var body: [(String, JSONValue)] = [("startDate", Self.milliseconds(start)), ("endDate", Self.milliseconds(end))]
        if let transactionID { body.append(("transactionId", .string(transactionID))) }
        if onlyFailures { body.append(("onlyFailures", .bool(true))) }
        var path = "/inApps/v1/notifications/history"
        if let paginationToken { path += "?paginationToken=\(StoreHTTP.escaped(paginationToken))" }
        let json = try await self.call(call, environment, path: path, method: .POST, body: .object(body))
        guard let items = json["notificationHistory"]?.arrayValue, let hasMore = json["hasMore"]?.boolValue else {
            throw StoreAPIError(call, .malformed, "the answer lacks notificationHistory or hasMore")
        }
        var notifications: [AppStoreNotificationPage.Item] = []
        for (index, item) in items.enumerated() {
            let place = "notificationHistory[\(index)]"
            let payload = try await verified(item["signedPayload"], what: "\(place).signedPayload", call)
            let data = payload["data"]
            if let bundle = data?["bundleId"]?.stringValue, bundle != settings.bundleID {
                throw StoreAPIError(call, .malformed, "\(place) is a notification of bundle \(bundle), not \(settings.bundleID)")
            }
            let transaction =
                data?["signedTransactionInfo"] == nil
                ? nil : try await verified(data?["signedTransactionInfo"], what: "\(place).data.signedTransactionInfo", call, isTransaction: true)
            let renewal =
                data?["signedRenewalInfo"] == nil ? nil : try await verified(data?["signedRenewalInfo"], what: "\(place).data.signedRenewalInfo", call)
            let attempts = (item["sendAttempts"]?.arrayValue ?? []).map {
                AppStoreNotificationPage.SendAttempt(attemptDate: $0["attemptDate"]?.intValue.map(Int64.init), result: $0["sendAttemptResult"]?.stringValue)
            }
            notifications.append(
                .init(
                    signedPayload: item["signedPayload"]?.stringValue ?? "", payload: payload, transaction: transaction, renewal: renewal,
                    sendAttempts: attempts
                )
            )
        }
        let token = json["paginationToken"]?.stringValue
        if hasMore, token == nil { throw StoreAPIError(call, .malformed, "hasMore is true but the answer has no paginationToken") }
        return AppStoreNotificationPage(notifications: notifications, paginationToken: token, hasMore: hasMore)
    }

    /// Every page of the notification history from `start` to `end`, one at a time, from
    /// `paginationToken` (nil: the first page) on.
    public func notificationHistory(
        from start: Date, to end: Date, environment: Environment = .production, transactionID: String? = nil, onlyFailures: Bool = false,
        paginationToken: String? = nil
    ) -> StorePages<AppStoreNotificationPage, String> {
        let call = StoreCall(store: Self.store, name: "Get Notification History")
        return StorePages(call, from: paginationToken) { (token) async throws(StoreAPIError) in
            let page = try await notificationHistoryPage(
                from: start, to: end, environment: environment, transactionID: transactionID, onlyFailures: onlyFailures, paginationToken: token
            )
            return (page, page.next)
        }
    }

    static func milliseconds(_ date: Date) -> JSONValue {
        .number(String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down))))
    }
}
