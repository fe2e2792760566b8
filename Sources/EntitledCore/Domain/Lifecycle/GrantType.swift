/// How access was granted (Qonversion's `grantType`).
public enum GrantType: String, Sendable, CaseIterable {
    case purchase
    case familySharing = "family_sharing"
    case offerCode = "offer_code"
    /// By an admin, not a store.
    case manual
}
