/// How the user came to hold a purchase (RevenueCat's `ownershipType`).
public enum Ownership: String, Sendable, CaseIterable {
    /// Bought by the user.
    case purchased
    /// Shared with the user by a family member who bought it.
    case familyShared = "family_shared"
}
