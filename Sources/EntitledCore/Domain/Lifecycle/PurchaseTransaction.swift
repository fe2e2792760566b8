/// One store transaction of a membership: its first purchase or a renewal.
public struct PurchaseTransaction: Hashable, Sendable {
    /// The store's id of this transaction.
    public var id: String
    /// The id of the transaction that started the subscription; equal to `id` for the first one.
    public var originalTransactionId: String
    /// What it was: `purchase` or `trial_started` (a grant's), `renewal` or `product_change` (an
    /// event's).
    public var type: String
    public var time: Timestamp
    /// When the period it paid for ends; `nil` for a one-time purchase.
    public var expiresAt: Timestamp?
    /// When the store took it back (a refund), if it did.
    public var revokedAt: Timestamp?

    public init(
        id: String, originalTransactionId: String, type: String, time: Timestamp, expiresAt: Timestamp? = nil,
        revokedAt: Timestamp? = nil
    ) {
        self.id = id
        self.originalTransactionId = originalTransactionId
        self.type = type
        self.time = time
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}
