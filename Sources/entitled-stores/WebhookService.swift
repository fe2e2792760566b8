import Crypto
import EntitledClient
import EntitledStores
import Foundation
import HTTPTypes
import Hummingbird
import ServiceLifecycle

/// Runs the deliverer of `--webhooks` beside the receiver: started with it, stopped (its progress written
/// down) on a graceful shutdown.
struct WebhookService: Service {
    let deliverer: WebhookDeliverer

    func run() async throws {
        await deliverer.start()
        // Until the service group stops (or this task is cancelled): then every endpoint writes its progress.
        try? await gracefulShutdown()
        await deliverer.stop()
    }
}

extension StoresService {
    /// The admin routes of the webhooks, behind the webhooks file's `admin-token-file` (a bearer token):
    /// `GET /webhooks` (every endpoint's status), `POST /webhooks/{name}/resume` (a set-aside endpoint goes
    /// on) and `POST /webhooks/{name}/redeliver/{id}` (a given-up message is sent again). Without a
    /// deliverer or an admin token they answer 404 with the reason.
    static func addWebhookRoutes(to router: Router<BasicRequestContext>, deliverer: WebhookDeliverer?) {
        let token = deliverer?.configuration.adminToken
        /// The refusal of a request that may not use the routes; `nil` when it may. The bearer token is
        /// compared by digest (in constant time), as the purchases' is.
        @Sendable func authorized(_ request: Request) -> Response? {
            guard deliverer != nil, let token else {
                return text(404, deliverer == nil ? "webhooks are not delivered: this receiver has no --webhooks" : "the webhook admin routes are not served: the webhooks file has no admin-token-file")
            }
            let presented = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
            guard SHA256.hash(data: Array(presented.utf8)) == SHA256.hash(data: Array(token.utf8)) else {
                return text(401, "the webhook admin routes need Authorization: Bearer and the token of the webhooks file's admin-token-file")
            }
            return nil
        }
        router.get("webhooks") { request, _ -> Response in
            if let refusal = authorized(request) { return refusal }
            let statuses = await deliverer!.statuses()
            return json(200, .object([("endpoints", .array(statuses.map(\.json)))]))
        }
        router.post("webhooks/:name/resume") { request, context -> Response in
            if let refusal = authorized(request) { return refusal }
            do throws(WebhookAdminError) {
                let delivery = try deliverer!.delivery(context.parameters.get("name") ?? "")
                await delivery.resume()
                return json(200, await delivery.status().json)
            } catch {
                return text(404, error.message)
            }
        }
        router.post("webhooks/:name/redeliver/:id") { request, context -> Response in
            if let refusal = authorized(request) { return refusal }
            do throws(WebhookAdminError) {
                let delivery = try deliverer!.delivery(context.parameters.get("name") ?? "")
                let attempt = try await delivery.redeliver(context.parameters.get("id") ?? "")
                let delivered: Bool = if case .delivered = attempt { true } else { false }
                return json(delivered ? 200 : 502, .object([("delivered", .bool(delivered)), ("result", .string(attempt.summary))]))
            } catch {
                return text(404, error.message)
            }
        }
    }

    static func json(_ status: Int, _ value: JSONValue) -> Response {
        text(status, value.jsonText, contentType: "application/json")
    }
}
