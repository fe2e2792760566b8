import Crypto
import EntitledClient
import EntitledStores
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The purchase-time path: `POST /purchases/google` and `POST /purchases/apple` take what the app got at
/// purchase and answer with the membership, granted now rather than when the store's notification comes
/// (seconds to minutes later). Called by the app's backend, never by the app: it carries the bearer token of
/// `--purchases-token-file`.
///
/// Requests: `{"user":"…","productId":"…","purchaseToken":"…","type":"subscription"|"product"}` (Google
/// Play), `{"user":"…","signedTransaction":"<StoreKit 2 JWS>"}` (App Store); a field not among these is
/// refused, naming it. Answers: `200 {"membership":{…}}` (PROTOCOL.md's membership
/// object), or `{"error":{"code":…,"message":…}}` with the status of `PurchaseFailure.Code`.
extension StoresService {
    static func addPurchaseRoutes(
        to router: Router<BasicRequestContext>, apple: AppleReceiver?, google: GooglePlayReceiver?, token: String?, metrics: StoreMetrics,
        logger: Logger
    ) {
        router.post("purchases/google") { request, _ -> Response in
            await purchase(
                request, of: "google", by: google, needing: "--google-package and --google-service-account", token: token, metrics: metrics, logger: logger
            ) {
                google, fields throws(PurchaseFailure) in
                try await google.grantAtPurchase(try googlePlayPurchase(fields), now: Int64(Date().timeIntervalSince1970))
            }
        }
        router.post("purchases/apple") { request, _ -> Response in
            await purchase(request, of: "apple", by: apple, needing: "--apple-root-ca and --apple-bundle-id", token: token, metrics: metrics, logger: logger) {
                apple, fields throws(PurchaseFailure) in
                let (user, transaction) = try appStorePurchase(fields)
                return try await apple.grantAtPurchase(user: user, signedTransaction: transaction)
            }
        }
    }

    /// Answers one purchase: the bearer token checked, the body read as an object of strings, `grant` run
    /// with the store's receiver (`nil` when its settings are absent: not served).
    private static func purchase<Receiver>(
        _ request: Request, of store: String, by receiver: Receiver?, needing settings: String, token: String?, metrics: StoreMetrics, logger: Logger,
        _ grant: (Receiver, [String: String]) async throws(PurchaseFailure) -> JSONValue
    ) async -> Response {
        guard let token else {
            metrics.purchase(store, PurchaseFailure.Code.notServed.rawValue)
            return purchaseAnswer(PurchaseFailure(.notServed, "purchases are not served: this receiver has no --purchases-token-file"))
        }
        guard let receiver else {
            metrics.purchase(store, PurchaseFailure.Code.notServed.rawValue)
            return purchaseAnswer(PurchaseFailure(.notServed, "\(store) purchases are not served: this receiver has no \(settings)"))
        }
        do throws(PurchaseFailure) {
            try authorize(request, token: token)
            var request = request
            let membership = try await grant(receiver, try await purchaseFields(of: &request))
            metrics.purchase(store, "granted")
            logger.info("granted a purchase at purchase time", metadata: ["store": "\(store)", "membership": "\(membership["id"]?.stringValue ?? "?")"])
            return text(200, JSONValue.object([("membership", membership)]).jsonText, contentType: "application/json")
        } catch {
            metrics.purchase(store, error.code.rawValue)
            logger.warning("a \(store) purchase was not granted: \(error)")
            return purchaseAnswer(error)
        }
    }

    /// The bearer token must be the configured one, compared by digest (in constant time).
    private static func authorize(_ request: Request, token: String) throws(PurchaseFailure) {
        let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
        guard SHA256.hash(data: Array(presented.utf8)) == SHA256.hash(data: Array(token.utf8)) else {
            throw PurchaseFailure(.unauthorized, "the Authorization header must be Bearer and the token of --purchases-token-file")
        }
    }

    /// The request's JSON object, each value a string.
    private static func purchaseFields(of request: inout Request) async throws(PurchaseFailure) -> [String: String] {
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: 64 << 10)
        } catch {
            throw PurchaseFailure(.badRequest, "the body could not be read, or is larger than 64 KiB")
        }
        guard let text = String(validating: Array(buffer: body), as: UTF8.self), let json = try? JSONValue(parsing: text),
            case .object(let members) = json
        else {
            throw PurchaseFailure(.badRequest, "the body is not a JSON object")
        }
        var fields: [String: String] = [:]
        for (name, value) in members {
            guard let text = value.stringValue else { throw PurchaseFailure(.badRequest, "\"\(name)\" must be a string") }
            guard fields.updateValue(text, forKey: name) == nil else { throw PurchaseFailure(.badRequest, "\"\(name)\" is given twice") }
        }
        return fields
    }

    private static func googlePlayPurchase(_ fields: [String: String]) throws(PurchaseFailure) -> GooglePlayPurchase {
        let known = ["user", "productId", "purchaseToken", "type"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw PurchaseFailure(.badRequest, "unknown field \"\(unknown)\"; a Google Play purchase takes \(known.joined(separator: ", "))")
        }
        guard let user = fields["user"], let product = fields["productId"], let token = fields["purchaseToken"], !user.isEmpty, !product.isEmpty, !token.isEmpty
        else { throw PurchaseFailure(.badRequest, "a Google Play purchase needs user, productId and purchaseToken") }
        guard let kind = GooglePlayPurchase.Kind(rawValue: fields["type"] ?? "subscription") else {
            throw PurchaseFailure(.badRequest, "\"type\" must be subscription or product")
        }
        return GooglePlayPurchase(user: user, productID: product, purchaseToken: token, kind: kind)
    }

    private static func appStorePurchase(_ fields: [String: String]) throws(PurchaseFailure) -> (user: String, signedTransaction: String) {
        let known = ["user", "signedTransaction"]
        if let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw PurchaseFailure(.badRequest, "unknown field \"\(unknown)\"; an App Store purchase takes \(known.joined(separator: ", "))")
        }
        guard let user = fields["user"], let transaction = fields["signedTransaction"], !user.isEmpty, !transaction.isEmpty else {
            throw PurchaseFailure(.badRequest, "an App Store purchase needs user and signedTransaction (StoreKit 2's jwsRepresentation)")
        }
        return (user, transaction)
    }

    private static func purchaseAnswer(_ failure: PurchaseFailure) -> Response {
        let error = JSONValue.object([("code", .string(failure.code.rawValue)), ("message", .string(failure.message))])
        return text(failure.status, JSONValue.object([("error", error)]).jsonText, contentType: "application/json")
    }
}
