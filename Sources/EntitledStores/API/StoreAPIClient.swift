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

    public init(http: HTTPClient = .shared, policy: RetryPolicy, limit: ConcurrencyLimit) {
        self.http = http
        self.policy = policy
        self.limit = limit
    }

    /// An answer the caller reads: any status but 429 and 5xx (and those once the retries ran out are errors).
    public struct Reply: Sendable {
        public var status: Int
        public var headers: HTTPHeaders
        public var body: [UInt8]
        public var json: JSONValue? { JSONValue(strictUTF8: body) }
    }

    /// What one call sends. `headers` is asked for before every try, so that an expired bearer token is
    /// replaced (the App Store's JWT lives minutes).
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
    /// - Parameter authorization: the `Authorization` header's value for each try.
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
        do {
            let response = try await http.execute(outgoing, timeout: .init(policy.timeout))
            let body = try await response.body.collect(upTo: maximumBodyBytes)
            let reply = Reply(status: Int(response.status.code), headers: response.headers, body: Array(buffer: body))
            switch reply.status {
            case 429:
                return .retryable(.rateLimited, "\(host) answered 429 (too many requests)", retryAfter: Self.retryAfter(reply.headers, now: Date()))
            case 500...:
                return .retryable(.unavailable, "\(host) answered \(reply.status)", retryAfter: Self.retryAfter(reply.headers, now: Date()))
            default:
                return .answered(reply)
            }
        } catch {
            return .retryable(.unavailable, "\(host) did not answer: \(error)", retryAfter: nil)
        }
    }

    /// `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
    static func retryAfter(_ headers: HTTPHeaders, now: Date) -> Duration? {
        guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) { return seconds >= 0 ? .seconds(seconds) : nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}

extension StoreAPIClient.Reply {
    /// The reply as the error of `call` for a status the caller does not take: 401/403 `unauthorized`, 404
    /// `notFound`, others `refused`, with the store's own message (`detail`) when its body has one.
    public func failure(_ call: StoreCall, detail: String?) -> StoreAPIError {
        let kind: StoreAPIError.Kind =
            switch status {
            case 401, 403: .unauthorized
            case 404, 410: .notFound
            default: .refused
            }
        return StoreAPIError(call, kind, "answered \(status)\(detail.map { ": \($0)" } ?? "")")
    }
}
