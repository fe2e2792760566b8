import EntitledClient

/// One page of Get Notification History (`NotificationHistoryResponse`,
/// https://developer.apple.com/documentation/appstoreserverapi/notificationhistoryresponse): up to 20
/// notifications Apple sent, or tried to send, to the app's server.
public struct AppStoreNotificationPage: Sendable, Hashable {
    public var notifications: [Item]
    /// Apple's token for the next page.
    public var paginationToken: String?
    public var hasMore: Bool

    /// The token of the next page, nil after the last.
    public var next: String? { hasMore ? paginationToken : nil }

    /// One notification (`NotificationHistoryResponseItem`).
    public struct Item: Sendable, Hashable {
        /// The notification as Apple sent it: `AppleReceiver` can apply `{"signedPayload": ...}` as if it
        /// had just been delivered.
        public var signedPayload: String
        /// `signedPayload`, verified: a `ResponseBodyV2DecodedPayload`.
        public var payload: JSONValue
        /// Its `data.signedTransactionInfo` and `data.signedRenewalInfo`, verified, when it has them.
        public var transaction: JSONValue?
        public var renewal: JSONValue?
        /// Apple's tries to deliver it (`sendAttempts`: `attemptDate` in milliseconds, `sendAttemptResult`
        /// such as `SUCCESS` or `TIMED_OUT`).
        public var sendAttempts: [SendAttempt]
    }

    public struct SendAttempt: Sendable, Hashable {
        public var attemptDate: Int64?
        public var result: String?
    }
}
