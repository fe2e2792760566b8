import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// How a message reaches an endpoint: one signed HTTP POST. A protocol so that the engine's tests can
/// count tries without a network.
public protocol WebhookTransport: Sendable {
    /// Sends `message` to `endpoint` once, signed at `now`, and says what came of it.
    func send(_ message: WebhookMessage, to endpoint: WebhookEndpoint, at now: Date) async -> WebhookAttempt
}

/// Standard Webhooks over HTTP (https://www.standardwebhooks.com): `POST` of the JSON payload with
/// `webhook-id` (the same for every try of a message), `webhook-timestamp` (the try's Unix seconds) and
/// `webhook-signature` (`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` for each secret,
/// space-separated), on AsyncHTTPClient.
public struct HTTPWebhookTransport: WebhookTransport {
    public let http: HTTPClient
    /// The most of an answer's body read (and thrown away): a receiver's answer says nothing the status
    /// does not.
    static let maximumAnswerBytes = 64 << 10

    public init(http: HTTPClient = HTTPWebhookTransport.client) {
        self.http = http
    }

    /// A client that follows no redirect: a 3xx is a failure, as the specification says, and following
    /// one would turn the POST into a GET without the body that a 2xx then counts as delivered. Its pool
    /// keeps up to 256 HTTP/1.1 connections to one host (AsyncHTTPClient's default is 8), so that an
    /// endpoint's `concurrency` (at most 256) is what reaches the receiver: with 8, a concurrency of 16 sent
    /// 8 at a time (the benchmark saw it), which against a distant receiver caps delivery at 8 a round trip.
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256
        )
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public func send(_ message: WebhookMessage, to endpoint: WebhookEndpoint, at now: Date) async -> WebhookAttempt {
        let timestamp = Int64(now.timeIntervalSince1970)
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "entitled-stores webhooks")
        request.headers.add(name: "webhook-id", value: message.id)
        request.headers.add(name: "webhook-timestamp", value: String(timestamp))
        request.headers.add(name: "webhook-signature", value: Self.signature(of: message, timestamp: timestamp, secrets: endpoint.secrets))
        request.body = .bytes(ByteBuffer(bytes: message.body))
        do {
            let response = try await http.execute(request, timeout: .nanoseconds(endpoint.timeout.nanosecondsRounded))
            // Read (and drop) a bounded part of the body, so that the connection can be used again.
            _ = try? await response.body.collect(upTo: Self.maximumAnswerBytes)
            return .answered(status: Int(response.status.code), headers: response.headers, now: Date())
        } catch {
            return .failed(reason: "no answer: \(error)")
        }
    }

    /// The `webhook-signature` of `message` at `timestamp`: one `v1,` entry per secret.
    static func signature(of message: WebhookMessage, timestamp: Int64, secrets: [String]) -> String {
        secrets.map { StandardWebhookSignature.signature(id: message.id, timestamp: timestamp, body: message.body, secret: $0) }
            .joined(separator: " ")
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanosecondsRounded: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
