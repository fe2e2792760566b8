import EntitledClient
import Foundation

extension AppleReceiver {
    /// Verifies a StoreKit 2 signed transaction (`Transaction.jwsRepresentation`, which the app sends its
    /// backend right after a purchase) with the same checks as a notification's (the certificate chain up to
    /// the configured root, at the signing date; the bundle id), applies it as its notification would, and
    /// returns the membership as `entitled` has it:
    ///
    /// - a purchase no membership holds is granted to `user` with the store's ids (`originalTransactionId`,
    ///   `transactionId`), so that the notifications that follow find and update the same membership; an
    ///   auto-renewable subscription renews (`willRenew`) until its renewal info says otherwise;
    /// - a later transaction of a subscription a membership holds (a resubscription after its expiry, an
    ///   upgrade or crossgrade to another product, a renewal) is its new period (`periodEvents`), unless it
    ///   ends no later than the membership's access (an older period, reported late);
    /// - a period paid after a refund begins a new membership (`grantAfterRefund`).
    ///
    /// A repeat, or a transaction its notification applied already, changes nothing more.
    public func grantAtPurchase(user: String, signedTransaction: String, now: Date = Date()) async throws(PurchaseFailure) -> JSONValue {
        let transaction: AppleTransaction
        let environment: String?
        do throws(NotificationRefusal) {
            let json = try await signed.verify(signedTransaction, what: "signedTransaction", now: now)
            guard json["bundleId"]?.stringValue == settings.bundleID else {
                throw NotificationRefusal(.wrongApp, "the transaction is for another app than \(settings.bundleID)")
            }
            if json["revocationDate"] != nil {
                throw NotificationRefusal(.malformed, "the transaction was refunded or revoked (revocationDate)")
            }
            transaction = try AppleTransaction(json)
            environment = json["environment"]?.stringValue
        } catch {
            throw PurchaseFailure(.invalidPurchase, error.reason)
        }
        // The notifications grant an unknown purchase to its appAccountToken: a token naming someone else would
        // have them move the membership away again. The token's own spelling (a UUID in lower case, as the
        // notifications read it) is the owner, so that both paths name the same user.
        if let token = transaction.appAccountToken, token != user.lowercased() {
            throw PurchaseFailure(.otherAccount, "the transaction's appAccountToken names another user than \(user)")
        }
        let user = transaction.appAccountToken ?? user
        var writer = MembershipWriter(gateway: gateway)
        let original = transaction.originalTransactionId
        let reason = "app_store purchase \(transaction.transactionID)"
        let renews: Bool? = transaction.isAutoRenewable ? true : nil
        let sandbox = environment == "Sandbox"
        var existing = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
            try await RefundSuccession.newest(of: original, writer: writer)
        }
        if let refunded = existing, Self.paysAfterRefund(transaction, refunded) {
            let successor = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
                try await Self.grantAfterRefund(
                    transaction, after: refunded, for: user, willRenew: renews, sandbox: sandbox, reason: reason, writer: &writer
                )
            }
            guard let successor else { throw PurchaseFailure(.otherAccount, "the period after the refund of original transaction \(original) belongs to another user") }
            existing = successor
        } else if existing == nil || existing?.user != user {
            let key = existing?.purchaseKey ?? original
            let grant = EntitledRequest.grant(
                user: user, product: transaction.productID, source: "app_store",
                expiresAt: transaction.expiresAt.map { ProtocolTime.string(milliseconds: $0) }, willRenew: renews,
                periodType: transaction.isTrial ? "trial" : nil, environment: sandbox ? "sandbox" : nil,
                transactionId: transaction.transactionID, originalTransactionId: key == transaction.transactionID ? nil : key, reason: reason
            )
            let moved = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in try await writer.grant(grant) }
            guard let moved else {
                throw PurchaseFailure(.otherAccount, "original transaction \(original) belongs to another user, and the transfer rule keeps it there")
            }
            existing = moved
        }
        guard let membership = existing else { throw PurchaseFailure(.unavailable, "entitled did not answer the grant with its membership; ask again") }
        // A later period of the membership: applied as its notification would, dated at its sale. An older
        // one (its end not past the membership's access) would take the expiry back: the membership has it.
        let access = membership.expiresAt.flatMap(ProtocolTime.milliseconds) ?? Int64.min
        if let ends = transaction.expiresAt, ends > access, membership.revokedAt == nil {
            let time = ProtocolTime.string(milliseconds: transaction.purchasedAt ?? Int64(now.timeIntervalSince1970 * 1000))
            for event in Self.periodEvents(transaction, of: membership, at: time, reason: reason) {
                _ = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in try await writer.apply(event) }
            }
        }
        let key = membership.purchaseKey ?? original
        let object = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
            try await writer.membershipObject(ofOriginalTransaction: key)
        }
        guard let object else { throw PurchaseFailure(.unavailable, "the purchase was granted, but entitled did not list it; ask again") }
        return object
    }
}
