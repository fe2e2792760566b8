/// A `key=value` option some command takes, such as `limit=` or `reason=`.
///
/// An option means the same, and is read the same way, in every command that takes it (`at=` is a time
/// in `check`, `event` and `show`), so its kind is stated once, here; which command takes which is its
/// `CommandSpec`'s business.
enum ConsoleOption: String, CaseIterable, Sendable {
    case at, source, plan, renews, period, env, ownership, type, transaction, original, key, reason
    case id, grace, product, limit, after

    /// How the value after the `=` is read.
    enum Kind {
        /// Any text, sent as it is.
        case text
        /// A time: a bare date is midnight UTC (`ConsoleTime.requestTime(from:)`).
        case time
        /// A whole number.
        case count
        /// `yes` or `no` (also `true` or `false`).
        case flag
    }

    var kind: Kind {
        switch self {
        case .at, .grace: .time
        case .limit: .count
        case .renews: .flag
        case .source, .plan, .period, .env, .ownership, .type, .transaction, .original, .key, .reason, .id, .product, .after: .text
        }
    }
}
