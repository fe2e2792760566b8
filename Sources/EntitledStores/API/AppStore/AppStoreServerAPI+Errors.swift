import EntitledClient

extension AppStoreServerAPI {
    /// The App Store's error codes this client acts on (https://developer.apple.com/documentation/appstoreserverapi/error-codes).
    public enum ErrorCode {
        /// `TransactionIdNotFoundError` (404): not a transaction of this app in this environment; the
        /// production call is then tried in the sandbox.
        public static let transactionIDNotFound = 4_040_010
        /// `StartDateTooFarInPastError` (400): Get Notification History's `startDate` is older than the
        /// history kept (180 days in production, 30 in the sandbox).
        public static let startDateTooFarInPast = 4_000_012
        /// `RateLimitExceededError` (429).
        public static let rateLimitExceeded = 4_290_000
        /// `GeneralInternalError` (500).
        public static let generalInternal = 5_000_000
        /// The "retryable" errors: `AccountNotFoundRetryableError`, `AppNotFoundRetryableError`,
        /// `OriginalTransactionIdNotFoundRetryableError` (404s) and `GeneralInternalRetryableError` (500).
        /// Apple's libraries try these again; so does this client, as it does a 5xx.
        public static let retryable: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]
    }

    /// Whether `reply` is one of Apple's documented retryable errors (its 500s are tried again anyway).
    static func isRetryable(_ reply: StoreAPIClient.Reply) -> Bool {
        reply.status == 404 && reply.json?["errorCode"]?.intValue.map(ErrorCode.retryable.contains) == true
    }

    /// An answer other than 200 as the error of `call`: Apple's error object `{errorCode, errorMessage}`
    /// (https://developer.apple.com/documentation/appstoreserverapi/error-codes) read into the message, and
    /// its code kept.
    static func failure(_ reply: StoreAPIClient.Reply, _ call: StoreCall) -> StoreAPIError {
        let json = reply.json
        let code = json?["errorCode"]?.intValue
        let message = json?["errorMessage"]?.stringValue
        let detail: String? =
            switch (code, message) {
            case let (code?, message?): "\(message) (errorCode \(code))"
            case let (code?, nil): "errorCode \(code)"
            case let (nil, message?): message
            case (nil, nil): nil
            }
        return reply.failure(call, detail: detail, storeCode: code.map(String.init))
    }
}
