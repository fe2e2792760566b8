import EntitledClient

/// Catches `check user:bob pro` where `pro` is an entitlement: the server takes `pro` for a product
/// nobody has and answers "not active", which reads as "bob has no pro".
public enum CheckAdvice {
    /// The error for a `check` of a product whose name is, as far as `knowledge` knows, an entitlement of
    /// the catalog and no product; it shows the command spelt right. `nil` for anything else.
    public static func misuse(of request: EntitledRequest, knowledge: SessionKnowledge) -> ConsoleUsageError? {
        guard let name = entitlementGivenAsProduct(in: request, knowledge: knowledge) else { return nil }
        return .entitlementGivenAsProduct(name, correction: correction(of: request, entitlement: name))
    }

    /// The same advice for a check the server has already answered "not active" (sent before the
    /// session knew the catalog), the server's answer first so that it is not mistaken for another:
    /// `not active: pro is an entitlement, not a product; to check the entitlement: check user:bob
    /// entitlement:pro`. `nil` when the name is no entitlement given as a product.
    public static func inactiveAnswerAdvice(for request: EntitledRequest, knowledge: SessionKnowledge) -> String? {
        guard let name = entitlementGivenAsProduct(in: request, knowledge: knowledge) else { return nil }
        return "not active: \(name) is an entitlement, not a product; to check the entitlement: "
            + correction(of: request, entitlement: name)
    }

    /// The product name of a `check` that `knowledge` knows as an entitlement and not as a product.
    private static func entitlementGivenAsProduct(in request: EntitledRequest, knowledge: SessionKnowledge) -> String? {
        guard request.op == "check", request.string("entitlement") == nil, let name = request.string("product") else { return nil }
        guard knowledge.entitlements.contains(name), !knowledge.products.contains(name) else { return nil }
        return name
    }

    /// The check spelt right: the same subjects and time, `entitlement:NAME` for the product.
    private static func correction(of request: EntitledRequest, entitlement name: String) -> String {
        let words =
            ["check", request.string("user").map { "user:" + $0 }, request.string("device").map { "device:" + $0 }, "entitlement:" + name,
             request.string("at").map { "at=" + $0 }]
        return words.compactMap { $0 }.joined(separator: " ")
    }
}
