import EntitledClient

extension ServerErrorCode {
    /// Whether an error answer to a request made for a notification says that the notification itself
    /// cannot be applied: asking again gets the same answer, so the store is told `400` and does not deliver
    /// it again. Every other answer may succeed later (a server still `loading`, an `internal` error, a
    /// write whose outcome is unknown, a stale read, a code of a newer server, an operation an older server
    /// lacks): the store is told `503` and delivers it again (issue #45: a server loading its data had
    /// genuine notifications answered `400` and dropped).
    var refusesTheNotification: Bool {
        switch self {
        case .badJSON, .badRequest, .notFound, .conflict, .tooLarge, .overLimit: true
        case .unknownOp, .unauthorized, .forbidden, .busy, .tlsRequired, .internal, .unavailable, .stale, .outcomeUnknown, .loading,
            .truncated, .unknown:
            false
        }
    }
}
