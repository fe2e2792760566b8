/// One call of a store's server API, as errors and logs name it: the store, the call (its name in the
/// store's reference), and the identifier it was about (a transaction, a purchase token, a page).
public struct StoreCall: Sendable, Hashable, CustomStringConvertible {
    /// `app_store`, `google_play`, `stripe`.
    public var store: String
    /// The call as the store's reference names it: `Get Transaction History`, `purchases.subscriptionsv2.get`,
    /// `List subscriptions`.
    public var name: String
    /// What the call was about, when it was about one thing.
    public var identifier: String?

    public init(store: String, name: String, identifier: String? = nil) {
        self.store = store
        self.name = name
        self.identifier = identifier
    }

    public var description: String { "\(store) \(name)\(identifier.map { " (\($0))" } ?? "")" }
}
