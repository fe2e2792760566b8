import EntitledClient
import Foundation

extension GooglePlayAPI {
    /// How far back `purchases.voidedpurchases.list` reaches: its `startTime` "cannot be older than 30
    /// days" (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list).
    public static let voidedPurchasesWindow: Duration = .seconds(30 * 86_400)

    /// One page of `purchases.voidedpurchases.list`
    /// (https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list):
    /// the purchases Google saw voided from `start` to `end` (`startTime`, `endTime` in milliseconds;
    /// nil: Google's defaults, 30 days ago and now), subscriptions included (`type=1`) unless
    /// `includeSubscriptions` is false, at most `maxResults` (Google's maximum and default: 1,000). Google
    /// ignores the window once `token` (the previous page's `nextPageToken`) is given.
    /// - Throws: `refused` when `start` is older than the 30 days Google keeps.
    public func voidedPurchasesPage(
        from start: Date? = nil, to end: Date? = nil, includeSubscriptions: Bool = true, maxResults: Int = 1000, token: String? = nil
    ) async throws(StoreAPIError) -> GoogleVoidedPurchasesPage {
        let call = StoreCall(store: Self.store, name: "purchases.voidedpurchases.list", identifier: token.map { "page \($0)" })
        var query = ["maxResults=\(maxResults)", "type=\(includeSubscriptions ? 1 : 0)"]
        if let start { query.append("startTime=\(Self.milliseconds(start))") }
        if let end { query.append("endTime=\(Self.milliseconds(end))") }
        if let token { query.append("token=\(StoreHTTP.escaped(token))") }
        let json = try await self.json(call, get: "voidedpurchases?" + query.joined(separator: "&"))
        var purchases: [GoogleVoidedPurchase] = []
        for (index, entry) in (json["voidedPurchases"]?.arrayValue ?? []).enumerated() {
            guard let purchase = GoogleVoidedPurchase(entry) else {
                throw StoreAPIError(call, .malformed, "voidedPurchases[\(index)] has no purchaseToken")
            }
            purchases.append(purchase)
        }
        let next = json["tokenPagination"]?["nextPageToken"]?.stringValue
        return GoogleVoidedPurchasesPage(voidedPurchases: purchases, next: next?.isEmpty == false ? next : nil)
    }

    /// Every page of the voided purchases from `start` to `end`, one at a time, from `token` (nil: the
    /// first page) on.
    public func voidedPurchases(
        from start: Date? = nil, to end: Date? = nil, includeSubscriptions: Bool = true, maxResults: Int = 1000, token: String? = nil
    ) -> StorePages<GoogleVoidedPurchasesPage, String> {
        StorePages(StoreCall(store: Self.store, name: "purchases.voidedpurchases.list"), from: token) { (token) async throws(StoreAPIError) in
            let page = try await voidedPurchasesPage(from: start, to: end, includeSubscriptions: includeSubscriptions, maxResults: maxResults, token: token)
            return (page, page.next)
        }
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
