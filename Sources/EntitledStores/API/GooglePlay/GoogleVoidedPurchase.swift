import EntitledClient

/// One voided purchase (`VoidedPurchase`,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases#VoidedPurchase).
public struct GoogleVoidedPurchase: Sendable, Hashable {
    public var purchaseToken: String
    /// The order voided: with subscriptions, each renewal is an order of the same purchase token.
    public var orderID: String?
    public var purchaseTimeMillis: Int64?
    public var voidedTimeMillis: Int64?
    /// 0 user, 1 developer, 2 Google.
    public var voidedSource: Int?
    /// 0 other, 1 remorse, 2 not received, 3 defective, 4 accidental purchase, 5 fraud, 6 friendly fraud,
    /// 7 chargeback, 8 unacknowledged purchase.
    public var voidedReason: Int?
    /// The resource as Google wrote it.
    public var json: JSONValue

    init?(_ json: JSONValue) {
        guard let token = json["purchaseToken"]?.stringValue else { return nil }
        purchaseToken = token
        orderID = json["orderId"]?.stringValue
        // int64 fields are JSON strings in Google's APIs; a number is taken too.
        purchaseTimeMillis = Self.int64(json["purchaseTimeMillis"])
        voidedTimeMillis = Self.int64(json["voidedTimeMillis"])
        voidedSource = json["voidedSource"]?.intValue
        voidedReason = json["voidedReason"]?.intValue
        self.json = json
    }

    static func int64(_ value: JSONValue?) -> Int64? {
        value?.stringValue.flatMap { Int64($0) } ?? value?.intValue.map(Int64.init)
    }
}
