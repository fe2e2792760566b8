/// What a grant does when the purchase it reports (its transaction's `originalTransactionId`) already
/// belongs to another user's membership: a restore on another account. RevenueCat offers the same two
/// choices ("Transfer to new App User ID", "Keep with original App User ID").
public enum TransferRule: String, Sendable, Hashable, CaseIterable {
    /// The membership moves to the grant's user (same id, product and expiry); the first user loses it.
    /// Recorded as a `transfer` in both users' history. The default, as in RevenueCat.
    case transfer
    /// The membership stays with the first user and the grant is refused (`conflict`), naming it.
    case keep
}
