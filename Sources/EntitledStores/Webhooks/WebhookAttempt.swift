import Foundation
import NIOHTTP1

/// What one try of a message came to, read as the Standard Webhooks specification asks a sender to read a
/// receiver's answer ("Delivery behavior"): a 2xx delivered it; 410 Gone says the endpoint is gone for
/// good; 429, 502 and 504 say the receiver is overloaded (throttle, after `Retry-After` when given); any
/// other status, a timeout or no answer is a failure to try again later.
public enum WebhookAttempt: Sendable, Hashable {
    case delivered(status: Int)
    /// 410: the endpoint is set aside until an admin resumes it.
    case gone
    /// 429, 502 or 504: every message of the endpoint waits `retryAfter` (when the receiver said), else
    /// the backoff.
    case throttled(status: Int, retryAfter: Duration?)
    /// Any other answer, or none: this message is tried again after the backoff.
    case failed(reason: String)

    /// The attempt an HTTP answer makes.
    static func answered(status: Int, headers: HTTPHeaders, now: Date) -> WebhookAttempt {
        switch status {
        case 200..<300: return .delivered(status: status)
        case 410: return .gone
        case 429, 502, 504:
            let retryAfter = headers.first(name: "retry-after").flatMap { RetryAfterFormat.standard.wait($0, now: now) }
            return .throttled(status: status, retryAfter: retryAfter)
        default: return .failed(reason: "HTTP \(status)")
        }
    }

    /// A short text for logs and `entitlectl webhooks`.
    public var summary: String {
        switch self {
        case .delivered(let status): "delivered (HTTP \(status))"
        case .gone: "HTTP 410 Gone"
        case .throttled(let status, let retryAfter): "HTTP \(status)" + (retryAfter.map { ", Retry-After \($0.components.seconds) s" } ?? "")
        case .failed(let reason): reason
        }
    }
}
