import EntitledClient

extension JSONValue {
    /// An object's id as the stores' APIs give it: a string, or an expanded object with an `id`
    /// (Stripe's `customer`, Whop's `user`); `nil` for anything else or an empty id.
    var storeID: String? {
        if let text = stringValue { return text.isEmpty ? nil : text }
        return self["id"]?.stringValue
    }
}
