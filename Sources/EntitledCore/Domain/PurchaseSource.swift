/// Where a membership came from: the store or payment provider that sold it, or a person who granted it.
public enum PurchaseSource: String, Sendable, CaseIterable {
    case appStore = "app_store"
    case playStore = "play_store"
    case stripe
    case whop
    case manual
    case promotional

    /// What a grant that names no source records.
    public static let `default` = PurchaseSource.manual
}
