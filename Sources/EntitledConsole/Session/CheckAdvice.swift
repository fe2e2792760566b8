import EntitledClient

/// Catches `check user:bob pro` where `pro` is an entitlement: the server takes `pro` for a product
/// nobody has and answers "not active", which reads as "bob has no pro".
public enum CheckAdvice {
    /// The error for a `check` of a product whose name is, as far as `knowledge` knows, an entitlement of
    /// the catalog and no product; it shows the command spelt right. `nil` for anything else.
    public static func misuse(of request: EntitledRequest, knowledge: SessionKnowledge) -> ConsoleUsageError? {
        guard request.op == "check", request.string("entitlement") == nil, let name = request.string("product") else { return nil }
        guard knowledge.entitlements.contains(name), !knowledge.products.contains(name) else { return nil }
        let words =
            ["check", request.string("user").map { "user:" + $0 }, request.string("device").map { "device:" + $0 }, "entitlement:" + name,
             request.string("at").map { "at=" + $0 }]
        return .entitlementGivenAsProduct(name, correction: words.compactMap { $0 }.joined(separator: " "))
    }
}
