import EntitledClient

/// One page of `purchases.voidedpurchases.list` (`VoidedPurchasesListResponse`,
/// https://developers.google.com/android-publisher/api-ref/rest/v3/purchases.voidedpurchases/list): the
/// purchases canceled, refunded or charged back in the window asked.
public struct GoogleVoidedPurchasesPage: Sendable, Hashable {
    public var voidedPurchases: [GoogleVoidedPurchase]
    /// `tokenPagination.nextPageToken`: the next page, nil after the last.
    public var next: String?
}
