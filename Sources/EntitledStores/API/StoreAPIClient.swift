import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOCore
import NIOHTTP1

/// The HTTP side of one store's API clients (`AppStoreServerAPI`, `GooglePlayAPI`, `StripeAPI`): sends a
/// call, tries it again as its `RetryPolicy` says (429 after `Retry-After`, 5xx, timeouts, no answer), at
/// most `limit.width` at once, and hands any other answer (2xx, 4xx) to the caller, which reads it as the
/// store's reference documents. Errors name the call (`StoreCall`).
public struct StoreAPIClient: Sendable {
    public let http: HTTPClient
    public let policy: RetryPolicy
    public let limit: ConcurrencyLimit
    /// The largest answer body read: the stores' pages are far smaller (a Stripe page of 100 expanded
    /// subscriptions is about 1 MiB).
    public var maximumBodyBytes = 16 << 20

    /// How the store writes `Retry-After` (Apple: a UNIX time in milliseconds).
    public var retryAfterFormat: RetryAfterFormat
    /// Answers other than 429 and 5xx that the store documents as worth trying again (the App Store's
    /// "retryable" 404s); tried again as a 5xx is.
    public var isRetryable: @Sendable (Reply) -> Bool

    public init(
        http: HTTPClient = .shared, policy: RetryPolicy, limit: ConcurrencyLimit, retryAfterFormat: RetryAfterFormat = .standard,
        isRetryable: @escaping @Sendable (Reply) -> Bool = { _ in false }
    ) {
        self.http = http
        self.policy = policy
        self.limit = limit
        self.retryAfterFormat = retryAfterFormat
        self.isRetryable = isRetryable
    }

    /// An answer the caller reads: any status but 429 and 5xx (and those once the retries ran out are errors).
    public struct Reply: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]
        public var json: JSONValue? { JSONValue(strictUTF8: body) }
    }

    /// What one call sends. Its `Authorization` is asked for before every try (`send`'s `authorization`),
    /// so that an expired bearer token is replaced (the App Store's JWT lives minutes).
    public struct Request: Sendable {
        public var method: HTTPMethod
        public var url: String
        public var body: [UInt8]?
        public var contentType: String?

        public init(method: HTTPMethod = .GET, url: String, body: [UInt8]? = nil, contentType: String? = nil) {
            self.method = method
            self.url = url
            self.body = body
            self.contentType = contentType
        }
    }

    /// Sends `request` for `call`, trying again as the policy says.
    /// - Parameter authorization: the `Authorization` header's value for each try. It runs while the try
    ///   holds its place in `limit`, so it must not send through this same client (an OAuth token is fetched
    ///   through a client of its own).
    public func send(
        _ call: StoreCall, _ request: Request, authorization: @Sendable () async throws(StoreAPIError) -> String?
    ) async throws(StoreAPIError) -> Reply {
        var random = SystemRandomNumberGenerator()
        var attempt = 1
        while true {
            let outcome = try await limit.run { () async throws(StoreAPIError) -> Attempt in
                let header = try await authorization()
                return await self.tryOnce(request, authorization: header)
            }
            let wait: Duration
            switch outcome {
            case .answered(let reply):
                return reply
            case .retryable(let kind, let message, let retryAfter):
                guard attempt < policy.attempts else {
                    throw StoreAPIError(call, kind, "\(message)\(policy.attempts > 1 ? " (after \(policy.attempts) tries)" : "")")
                }
                if let retryAfter, retryAfter > policy.longestRetryAfter {
                    throw StoreAPIError(call, .rateLimited, "\(message), and asked to wait \(retryAfter), longer than the \(policy.longestRetryAfter) waited")
                }
                let backoff = policy.backoff(beforeRetry: attempt, using: &random)
                wait = max(backoff, retryAfter ?? .zero)
            }
            attempt += 1
            do {
                try await Task.sleep(for: wait)
            } catch {
                throw StoreAPIError(call, .unavailable, "cancelled while waiting to try again")
            }
        }
    }

    enum Attempt: Sendable {
        case answered(Reply)
        case retryable(StoreAPIError.Kind, String, retryAfter: Duration?)
    }

    private func tryOnce(_ request: Request, authorization: String?) async -> Attempt {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = request.method
        if let authorization { outgoing.headers.add(name: "Authorization", value: authorization) }
        outgoing.headers.add(name: "Accept", value: "application/json")
        if let contentType = request.contentType { outgoing.headers.add(name: "Content-Type", value: contentType) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let host = StoreHTTP.host(request.url)
        let reply: Reply
        do {
            reply = try await exchange(outgoing)
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .retryable(.unavailable, "\(host) did not answer within \(policy.timeout)", retryAfter: nil)
        } catch is TimedOut {
            return .retryable(.unavailable, "\(host) did not answer within \(policy.timeout)", retryAfter: nil)
        } catch {
            return .retryable(.unavailable, "\(host) did not answer: \(error)", retryAfter: nil)
        }
        switch reply.status {
        case 429:
            return .retryable(.rateLimited, "\(host) answered 429 (too many requests)\(reply.snippet)", retryAfter: retryAfter(reply.headers))
        case 500...:
            return .retryable(.unavailable, "\(host) answered \(reply.status)\(reply.snippet)", retryAfter: retryAfter(reply.headers))
        default:
            if isRetryable(reply) { return .retryable(.unavailable, "\(host) answered \(reply.status)\(reply.snippet)", retryAfter: nil) }
            return .answered(reply)
        }
    }

    struct TimedOut: Error {}

    /// One exchange, answer body included, within the policy's timeout. AsyncHTTPClient's deadline ends
    /// once the answer's head has arrived (its `executeCancellable` cancels the deadline then), so a store
    /// that sends a head and stalls the body would hold the try for the client's read timeout (90 s for
    /// `HTTPClient.shared`); the try is cancelled by a timer instead.
    ///
    /// The timer is an event loop's scheduled task, not a `Task.sleep` raced in a task group: a cancelled
    /// sleep keeps its task allocated until the time it slept for (on Linux the runtime's delayed job stays
    /// queued), so a reconciliation making 3,000 calls a second held 30 s of them, about 70 MiB; a scheduled
    /// task is removed when cancelled.
    private func exchange(_ outgoing: HTTPClientRequest) async throws -> Reply {
        let http = http
        let timeout = policy.timeout
        let maximumBodyBytes = maximumBodyBytes
        let work = Task {
            // The client's deadline is a backstop: the timer below ends the try.
            let response = try await http.execute(outgoing, deadline: .now() + TimeAmount(timeout) + .seconds(1))
            let body = try await response.body.collect(upTo: maximumBodyBytes)
            return Reply(status: Int(response.status.code), headers: response.headers, body: Array(buffer: body))
        }
        let expired = ExpiryFlag()
        let timer = http.eventLoopGroup.any().scheduleTask(in: TimeAmount(timeout)) {
            expired.set()
            work.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await work.value
            } onCancel: {
                work.cancel()
            }
        } catch {
            if expired.isSet { throw TimedOut() }
            throw error
        }
    }

    /// Whether a try's timer fired.
    final class ExpiryFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    private func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        headers.first(name: "Retry-After").flatMap { retryAfterFormat.wait($0, now: Date()) }
    }
}

extension StoreAPIClient.Reply {
    /// The start of the body, for a message about an answer that is tried again (the store's own error
    /// object, which the caller never reads then): `: {...}`, or nothing for an empty body.
    var snippet: String {
        guard !body.isEmpty else { return "" }
        let text = String(decoding: body.prefix(300), as: UTF8.self).split(whereSeparator: \.isNewline).joined(separator: " ")
        return ": \(text)\(body.count > 300 ? "…" : "")"
    }

    /// The reply as the error of `call` for a status the caller does not take: 401/403 `unauthorized`, 404
    /// `notFound`, others `refused`, with the store's own message (`detail`) when its body has one.
    public func failure(_ call: StoreCall, detail: String?, storeCode: String? = nil) -> StoreAPIError {
        let kind: StoreAPIError.Kind =
            switch status {
            case 401, 403: .unauthorized
            case 404, 410: .notFound
            default: .refused
            }
        return StoreAPIError(call, kind, "answered \(status)\(detail.map { ": \($0)" } ?? "")", storeCode: storeCode)
    }
}
