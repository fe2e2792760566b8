import Foundation

/// How a store writes the `Retry-After` header of its 429s: the stores disagree, and a number read the
/// wrong way is either no wait at all or a wait of decades.
public enum RetryAfterFormat: Sendable, Hashable {
    /// RFC 9110 §10.2.3 (https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3): a number of seconds, or
    /// an HTTP date. Google's APIs and Stripe.
    case standard
    /// The App Store Server API: "a UNIX time, in milliseconds, that informs you when you can next send a
    /// request" (https://developer.apple.com/documentation/appstoreserverapi/identifying-rate-limits). A
    /// small number (under a day's worth of seconds) is taken as seconds, as RFC 9110 writes it, so that a
    /// proxy in front of the store that rewrites the header is still honoured.
    case unixMilliseconds

    /// How long `value` asks to wait from `now`; `nil` when it cannot be read, zero for a time past.
    public func wait(_ value: String, now: Date) -> Duration? {
        let value = value.trimmingCharacters(in: .whitespaces)
        guard !value.isEmpty else { return nil }
        if let number = Int64(value) {
            guard number >= 0 else { return nil }
            if self == .unixMilliseconds, number > 86_400 {
                return .milliseconds(max(0, number - Int64((now.timeIntervalSince1970 * 1000).rounded())))
            }
            return .seconds(number)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000)))
    }
}
