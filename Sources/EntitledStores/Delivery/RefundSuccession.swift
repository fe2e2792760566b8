import EntitledClient

/// A store purchase paid for again after a refund revoked its membership, the same way for every store.
///
/// A refund's revocation is final in `entitled` (Protocol/PROTOCOL.md, Revocation: only a `refund_reversal`
/// of that refund undoes it), and a grant naming a purchase a membership holds creates nothing. The stores go
/// on with the same purchase after a refund, though: Apple keeps a subscription's `originalTransactionId`
/// when the customer resubscribes, or when it renews after a refund of its period; Stripe bills the
/// subscription on unless it is canceled too (https://docs.stripe.com/refunds). A period paid later is the
/// customer paying, so it is granted as a new membership of the same owner whose `originalTransactionId` is
/// the store's id with a generation: `ORIGINAL~2`, then `ORIGINAL~3` after a further refund. Notifications
/// name the store's id; `newest(of:writer:)` follows the chain from it to the membership they concern.
public enum RefundSuccession {
    /// The key of the `generation`th membership of the store's purchase `original` (the first is `original`).
    public static func key(of original: String, generation: Int) -> String {
        generation <= 1 ? original : "\(original)~\(generation)"
    }

    /// The store's own id in `key`: what to ask the store about (a reconciliation).
    public static func storeIdentifier(of key: String) -> String {
        parts(of: key).original
    }

    /// The key of the membership that follows `refunded`, a membership of the chain of `original`.
    static func key(following refunded: MembershipInfo, original: String) -> String {
        let held = parts(of: refunded.purchaseKey ?? original)
        return key(of: original, generation: held.original == original ? held.generation + 1 : 2)
    }

    /// `key` as the store's id and a generation: `ORIGINAL~N` is (ORIGINAL, N); any other key is itself, 1.
    private static func parts(of key: String) -> (original: String, generation: Int) {
        guard let tilde = key.lastIndex(of: "~"), let generation = Int(key[key.index(after: tilde)...]), generation >= 2 else {
            return (key, 1)
        }
        return (String(key[..<tilde]), generation)
    }

    /// The membership of the chain of `original` that the store's later news concerns: the purchase's own
    /// while no refund revoked it, else its successors' as far as they go. The last is returned revoked
    /// when no period was paid after its refund; `nil` when no membership holds the purchase.
    static func newest(of original: String, writer: MembershipWriter) async throws(ReceiveFailure) -> MembershipInfo? {
        guard var membership = try await writer.membership(ofOriginalTransaction: original) else { return nil }
        var generation = 2
        while membership.isRevokedByRefund, let next = try await writer.membership(ofOriginalTransaction: key(of: original, generation: generation)) {
            membership = next
            generation += 1
        }
        return membership
    }
}

extension MembershipInfo {
    /// Revoked by a store's refund (a `refund` event), rather than by an operator's `revoke`, which stays
    /// final whatever the store reports later. The reason alone cannot tell them apart (an operator may
    /// give the reason `refund`); a `refund` event also marks the transaction it refunds (PROTOCOL.md,
    /// Revocation), which a `revoke` never does.
    var isRevokedByRefund: Bool { revokedAt != nil && reason == "refund" && transactions.contains { $0.revokedAt != nil } }

    /// The `originalTransactionId` a grant names to find this membership: its first transaction's.
    var purchaseKey: String? { transactions.first?.originalTransactionId }
}
