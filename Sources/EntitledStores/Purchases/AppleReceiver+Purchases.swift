import EntitledClient
import Foundation

extension AppleReceiver {
    /// Verifies a StoreKit 2 signed transaction (`Transaction.jwsRepresentation`, which the app sends its
    /// backend right after a purchase) with the same checks as a notification's (the certificate chain up to
    /// the configured root, at the signing date; the bundle id), grants it to `user` with the store's ids
    /// (`originalTransactionId`, `transactionId`), so that the notifications that follow find and update the
    /// same membership, and returns the membership as `entitled` has it. A repeat, or a purchase its
    /// notification granted already, grants nothing more.
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
        let existing = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in try await writer.membership(ofOriginalTransaction: original) }
        if existing == nil || existing?.user != user {
            let grant = EntitledRequest.grant(
                user: user, product: transaction.productID, source: "app_store",
                expiresAt: transaction.expiresAt.map { ProtocolTime.string(milliseconds: $0) },
                periodType: transaction.isTrial ? "trial" : nil, environment: environment == "Sandbox" ? "sandbox" : nil,
                transactionId: transaction.transactionID, originalTransactionId: original == transaction.transactionID ? nil : original,
                reason: "app_store purchase \(transaction.transactionID)"
            )
            let moved = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in try await writer.grant(grant) }
            if moved == nil {
                throw PurchaseFailure(.otherAccount, "original transaction \(original) belongs to another user, and the transfer rule keeps it there")
            }
        }
        let membership = try await PurchaseFailure.attempting { () async throws(ReceiveFailure) in
            try await writer.membershipObject(ofOriginalTransaction: original)
        }
        guard let membership else { throw PurchaseFailure(.unavailable, "the purchase was granted, but entitled did not list it; ask again") }
        return membership
    }
}
