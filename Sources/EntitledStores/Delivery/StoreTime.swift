import EntitledClient

/// The stores' times, untrusted numbers until checked here: each is range-checked before any arithmetic
/// or date conversion, and one outside the range is a malformed notification (400), never a trap.
///
/// The range is what the protocol can write (RFC 3339, years 1970 to 9999): a store's real times are
/// decades inside it.
public enum StoreTime {
    /// 9999-12-31T23:59:59Z, the last second RFC 3339 writes with four digits.
    public static let latestSeconds: Int64 = 253_402_300_799
    public static let latestMilliseconds: Int64 = latestSeconds * 1000 + 999

    /// `value` (Unix seconds) when it lies between 1970 and 9999; `field` names it in the refusal.
    public static func seconds(_ value: Int64, _ field: String) throws(NotificationRefusal) -> Int64 {
        guard (0...latestSeconds).contains(value) else {
            throw NotificationRefusal(.malformed, "\(field) \(value) is not a Unix time between 1970 and 9999")
        }
        return value
    }

    /// `value` (Unix milliseconds) when it lies between 1970 and 9999; `field` names it in the refusal.
    public static func milliseconds(_ value: Int64, _ field: String) throws(NotificationRefusal) -> Int64 {
        guard (0...latestMilliseconds).contains(value) else {
            throw NotificationRefusal(.malformed, "\(field) \(value) is not a time in milliseconds between 1970 and 9999")
        }
        return value
    }

    /// A JSON number that must be a time in seconds, if present: `nil` when absent or null.
    public static func seconds(_ json: JSONValue?, _ field: String) throws(NotificationRefusal) -> Int64? {
        guard let json, !json.isNull else { return nil }
        guard let value = json.intValue else { throw NotificationRefusal(.malformed, "\(field) is not a whole number of seconds") }
        return try seconds(Int64(value), field)
    }

    /// A JSON number that must be a time in milliseconds, if present: `nil` when absent or null.
    public static func milliseconds(_ json: JSONValue?, _ field: String) throws(NotificationRefusal) -> Int64? {
        guard let json, !json.isNull else { return nil }
        guard let value = json.intValue else { throw NotificationRefusal(.malformed, "\(field) is not a whole number of milliseconds") }
        return try milliseconds(Int64(value), field)
    }
}
