import Crypto
import EntitledClient
import EntitledConfiguration
import EntitledStores
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP receiver: one route per store (`POST /apple`, `/google`, `/stripe`, `/whop`), `GET /metrics`
/// and `GET /health`. A store's notification is answered 200 only once everything it says is acknowledged
/// by `entitled`; 4xx when it is refused (with a one-line reason); 503 when `entitled` cannot take it, so
/// that the store delivers it again.
struct StoresService {
    let settings: StoresSettings

    func run() async throws {
        var logger = Logger(label: "entitled-stores")
        logger.logLevel = settings.logLevel
        if !settings.unknownVariables.isEmpty {
            let described = settings.unknownVariables.map(SettingTable.stores.describing(unknownVariable:))
            logger.warning(
                "ignoring unknown environment variables: \(described.joined(separator: ", ")); the settings are ENTITLED_STORES_ and a long option name, such as ENTITLED_STORES_LISTEN"
            )
        }
        let pool = settings.entitledPool(connections: 2, requestTimeout: .seconds(10))
        let gateway = PoolGateway(pool: pool)
        let metrics = StoreMetrics()
        let unmatched: UnmatchedNotifications
        do {
            unmatched = try UnmatchedNotifications(directory: settings.stateDirectory + "/unmatched")
        } catch {
            throw StoresSettings.Failure(message: "cannot use the state directory \(settings.stateDirectory): \(error)")
        }
        let router = Router()
        router.add(middleware: UnknownRouteReason())
        // Stripe's API key alone (for imports and reconciliation) does not serve `/stripe`: its webhook's secrets do.
        let stripe = settings.stripe.flatMap { $0.secrets.isEmpty ? nil : StripeReceiver(settings: $0, gateway: gateway) }
        let notificationLogger = logger
        router.post("stripe") { request, _ -> Response in
            guard let stripe else { return Self.notServed("stripe", "--stripe-secret", metrics) }
            return await Self.receive("stripe", request, metrics: metrics, logger: notificationLogger, unmatched: unmatched) { body, request throws(ReceiveFailure) in
                try await stripe.receive(
                    body: body, signature: request.headers[HTTPField.Name("Stripe-Signature")!], now: Int64(Date().timeIntervalSince1970)
                )
            }
        }
        let apple: AppleReceiver?
        do {
            apple = try settings.apple.map { settings throws(NotificationRefusal) in try AppleReceiver(settings: settings, gateway: gateway) }
        } catch {
            throw StoresSettings.Failure(message: "the App Store root certificate file cannot be used: \(error.reason)")
        }
        router.post("apple") { request, _ -> Response in
            guard let apple else { return Self.notServed("apple", "--apple-root-ca and --apple-bundle-id", metrics) }
            return await Self.receive("apple", request, metrics: metrics, logger: notificationLogger, unmatched: unmatched) { body, _ throws(ReceiveFailure) in
                try await apple.receive(body: body)
            }
        }
        let whop = settings.whop.map { WhopReceiver(settings: $0, gateway: gateway) }
        router.post("whop") { request, _ -> Response in
            guard let whop else { return Self.notServed("whop", "--whop-secret", metrics) }
            return await Self.receive("whop", request, metrics: metrics, logger: notificationLogger) { body, request throws(ReceiveFailure) in
                var headers: [String: String] = [:]
                for name in ["webhook-id", "webhook-timestamp"] {
                    let values = request.headers[values: HTTPField.Name(name)!]
                    guard values.count <= 1 else { throw .refused(NotificationRefusal(.badSignature, "\(name) is sent \(values.count) times")) }
                    headers[name] = values.first
                }
                // Several webhook-signature fields are one space-separated list (combined, they would be
                // joined with commas, which are part of each entry).
                let signatures = request.headers[values: HTTPField.Name("webhook-signature")!]
                if !signatures.isEmpty { headers["webhook-signature"] = signatures.joined(separator: " ") }
                return try await whop.receive(body: body, headers: headers, now: Int64(Date().timeIntervalSince1970))
            }
        }
        let google: GooglePlayReceiver?
        do {
            google = try settings.google.map { settings throws(NotificationRefusal) in try GooglePlayReceiver(settings: settings, gateway: gateway) }
        } catch {
            throw StoresSettings.Failure(message: "the Google service account key cannot be used: \(error.reason)")
        }
        router.post("google") { request, _ -> Response in
            guard let google else { return Self.notServed("google", "--google-package and --google-service-account", metrics) }
            return await Self.receive("google", request, metrics: metrics, logger: notificationLogger, unmatched: unmatched) { body, request throws(ReceiveFailure) in
                try await google.receive(body: body, authorization: request.headers[.authorization], now: Int64(Date().timeIntervalSince1970))
            }
        }
        Self.addPurchaseRoutes(to: router, apple: apple, google: google, token: settings.purchasesToken, metrics: metrics, logger: notificationLogger)
        let deliverer: WebhookDeliverer?
        do {
            deliverer = try settings.webhooks.map { configuration throws(WebhookStateError) in
                try WebhookDeliverer(configuration: configuration, entitled: settings.entitled, stateDirectory: settings.stateDirectory, logger: logger)
            }
        } catch {
            throw StoresSettings.Failure(message: "\(error)")
        }
        Self.addWebhookRoutes(to: router, deliverer: deliverer)
        router.get("metrics") { _, _ -> Response in
            let webhooks = await deliverer?.metricsText() ?? ""
            return Self.text(200, metrics.text + webhooks, contentType: "text/plain; version=0.0.4")
        }
        router.get("health") { _, _ -> Response in Self.text(200, "ok") }

        let stores = settings.storesOn.isEmpty ? "none" : settings.storesOn.joined(separator: ", ")
        logger.info(
            "starting entitled-stores",
            metadata: [
                "listen": "\(settings.listenHost):\(settings.listenPort)", "entitled": "\(settings.entitled)",
                "token": "\(settings.token == nil ? "none" : "from the token file")", "stores": "\(stores)",
                "idleTimeout": "\(settings.idleTimeoutSeconds)s", "requestTimeout": "\(settings.requestTimeoutSeconds)s",
                "maxConnections": "\(settings.maximumConnections)",
            ]
        )
        if settings.storesOn.isEmpty {
            logger.warning("no store is configured: every notification is answered 404 (give --stripe-secret, ...)")
        }
        let entitled = settings.entitled
        let retrier = UnmatchedRetrier(
            unmatched: unmatched, apple: apple, google: google, stripe: stripe, interval: .seconds(settings.unmatchedRetrySeconds), metrics: metrics, logger: logger
        )
        var services: [any Service] = [retrier]
        if let deliverer {
            services.append(WebhookService(deliverer: deliverer))
            logger.info(
                "delivering the change feed as webhooks",
                metadata: ["endpoints": "\(deliverer.configuration.endpoints.map { "\($0.name) \($0.url)" }.joined(separator: ", "))"]
            )
        }
        // The stores' APIs, when their credentials are given: the reconciliation, on its schedule.
        let clients: StoreClients
        do {
            clients = try StoreClients(settings: settings, gateway: gateway)
        } catch {
            throw StoresSettings.Failure(message: "\(error)")
        }
        if settings.reconcileIntervalHours > 0, !clients.reconcilerStores.isEmpty {
            let reconciliation = Reconciliation(settings: settings, clients: clients, gateway: gateway, concurrency: 8, logger: logger)
            services.append(
                ReconciliationSchedule(
                    interval: .seconds(Int64(settings.reconcileIntervalHours) * 3600), stateDirectory: settings.stateDirectory, logger: logger
                ) { _ = await reconciliation.run(metrics: metrics) }
            )
        }
        // Hummingbird's singleton loops, named here so that the roster schedules its later looks on one of them.
        let loops = EventLoopGroupProvider.singleton.eventLoopGroup
        let roster = ConnectionRoster(maximum: settings.maximumConnections, loop: loops.any(), metrics: metrics, logger: logger)
        let app = Application(
            router: router,
            // The idle timeout closes a connection that sent no complete header, body part or request for that
            // long; the request deadline bounds a request's whole arrival, however steadily it trickles; the
            // roster caps the connections and makes room for new ones (ConnectionRoster, RequestDeadlineHandler).
            server: .http1(
                requestTimeout: .seconds(Int64(settings.requestTimeoutSeconds)), idleTimeout: .seconds(Int64(settings.idleTimeoutSeconds)),
                roster: roster, metrics: metrics, logger: logger
            ),
            configuration: ApplicationConfiguration(
                address: .hostname(settings.listenHost, port: settings.listenPort), serverName: "entitled-stores",
                availableConnectionsDelegate: roster
            ),
            services: services,
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                print("entitled-stores listening on http://\(channel.localAddress?.ipAddress ?? "?"):\(port) (stores: \(stores); entitled \(entitled))")
                fflush(nil)  // scripts and tests wait for this line
            },
            eventLoopGroupProvider: .shared(loops),
            logger: logger
        )
        try await app.runService()
    }

    /// Reads the body (at most `NotificationRefusal.maximumBodyBytes`), runs `handle` and answers.
    static func receive(
        _ store: String, _ request: Request, metrics: StoreMetrics, logger: Logger, unmatched: UnmatchedNotifications? = nil,
        _ handle: ([UInt8], Request) async throws(ReceiveFailure) -> NotificationOutcome
    ) async -> Response {
        metrics.received(store)
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: NotificationRefusal.maximumBodyBytes)
        } catch let interrupted as RequestDeadlineHandler.Interrupted {
            // Cut short at the request deadline or to make room: the connection answered 408 and counted it.
            return text(408, "request timeout: \(interrupted)")
        } catch is NIOTooManyBytesError {
            return refuse(store, NotificationRefusal(.tooLarge, "the body is larger than \(NotificationRefusal.maximumBodyBytes) bytes"), metrics: metrics, logger: logger)
        } catch {
            // A bad chunk, an unknown transfer coding, a client that hung up: not a size problem.
            return refuse(store, NotificationRefusal(.malformed, "the body could not be read: \(error)"), metrics: metrics, logger: logger)
        }
        let bytes = Array(buffer: body)
        guard String(validating: bytes, as: UTF8.self) != nil else {
            return refuse(store, NotificationRefusal(.malformed, "the body is not valid UTF-8"), metrics: metrics, logger: logger)
        }
        do {
            let outcome = try await handle(bytes, request)
            if case .awaitingPurchase(let original, let reason) = outcome {
                // Kept before the store hears 200: a crash then cannot lose it.
                do {
                    let id = SHA256.hash(data: bytes).prefix(16).map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
                    try unmatched?.keep(store: store, id: id, originalTransaction: original, reason: reason, body: bytes, now: Int64(Date().timeIntervalSince1970 * 1000))
                } catch {
                    metrics.unavailable(store)
                    logger.error("could not keep an unmatched \(store) notification: \(error); answered 503")
                    return text(503, "unavailable: the notification could not be kept; deliver again later")
                }
            }
            metrics.finished(store, outcome)
            switch outcome {
            case .applied(let changes):
                logger.info("applied a \(store) notification", metadata: ["changes": "\(changes)"])
                return text(200, "applied")
            case .duplicate:
                logger.info("a \(store) notification was applied before: nothing changed")
                return text(200, "duplicate")
            case .ignored(let reason):
                logger.info("ignored a \(store) notification: \(reason)")
                return text(200, "ignored: \(reason)")
            case .unmatched(let reason):
                logger.warning("unmatched \(store) notification: \(reason)")
                return text(200, "unmatched: \(reason)")
            case .awaitingPurchase(let original, let reason):
                logger.warning("kept a \(store) notification until a grant names original transaction \(original): \(reason)")
                return text(200, "unmatched: \(reason); kept until a grant names original transaction \(original)")
            }
        } catch {
            switch error {
            case .refused(let refusal):
                return refuse(store, refusal, metrics: metrics, logger: logger)
            case .unavailable(let unavailable):
                metrics.unavailable(store)
                logger.error("could not apply a \(store) notification: \(unavailable.reason); answered 503, the store delivers it again")
                return text(503, "unavailable: \(unavailable.reason); deliver again later")
            }
        }
    }

    static func refuse(_ store: String, _ refusal: NotificationRefusal, metrics: StoreMetrics, logger: Logger) -> Response {
        metrics.refused(store, refusal.kind)
        logger.warning("refused a \(store) notification: \(refusal)")
        return text(refusal.status, refusal.reason)
    }

    static func notServed(_ store: String, _ option: String, _ metrics: StoreMetrics) -> Response {
        metrics.received(store)
        metrics.refused(store, .notFound)
        return text(404, "\(store) notifications are not served: this receiver has no \(option)")
    }

    static func text(_ status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8") -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        let line = body.hasSuffix("\n") ? body : body + "\n"
        return Response(status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: line)))
    }
}

/// Answers a request no route takes with a one-line reason rather than an empty 404.
struct UnknownRouteReason<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound || error.status == .methodNotAllowed {
            return StoresService.text(
                Int(error.status.code), "no route \(request.method) \(request.uri.path); routes: POST /apple, /google, /stripe, /whop, /purchases/google, /purchases/apple; GET /metrics, /health, /webhooks"
            )
        }
    }
}
