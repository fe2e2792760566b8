import EntitledClient
import EntitledConsole
import Testing

/// What a console line turns into when it is a protocol request: the console command (which decides how
/// the answer is shown) and the exact request line that goes to the server.
struct SentRequest: Equatable, CustomStringConvertible {
    var command: ConsoleCommand
    var line: String

    var description: String { "\(command.rawValue) -> \(line)" }
}

/// The request a console line parses to; `nil` when it parses to something else (help, quit, raw, nothing).
func sentRequest(_ line: String) throws(ConsoleUsageError) -> SentRequest? {
    guard case .request(let command, let request)? = try CommandParser.parse(line: line) else { return nil }
    return SentRequest(command: command, line: request.jsonLine)
}

/// The request words (as a shell split them) parse to.
func sentRequest(words: [String]) throws(ConsoleUsageError) -> SentRequest? {
    guard case .request(let command, let request)? = try CommandParser.parse(words: words) else { return nil }
    return SentRequest(command: command, line: request.jsonLine)
}

/// The usage error a console line is refused with; `nil` when it parses.
func usageError(_ line: String) -> ConsoleUsageError? {
    do {
        _ = try CommandParser.parse(line: line)
        return nil
    } catch {
        return error
    }
}

/// The spec of a command the console certainly has.
func spec(_ name: String) throws -> CommandSpec {
    try #require(CommandSpec.named(name))
}

/// A response line parsed the way the client parses what the server sends.
func response(_ line: String) throws -> EntitledResponse {
    try EntitledResponse(line: line)
}

/// Response lines copied from Protocol/PROTOCOL.md, section 6, with the lifecycle fields every membership
/// object now carries (what the server sends for a plain grant); the lines after `snapshot` are real
/// answers of the server to the lifecycle operations (event, customer, history, watch).
enum ProtocolLines {
    static let pong = #"{"ok":true,"id":1}"#
    static let guestGrant =
        #"{"ok":true,"id":5,"membership":{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
    static let lifetimeGrant =
        #"{"ok":true,"id":12,"membership":{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
    static let expiredGrant =
        #"{"ok":true,"id":33,"membership":{"id":"mem_fg8dr9hvxd94a","productId":"old","device":"dev_Z","status":"expired","isActive":false,"createdAt":"2026-11-22T00:32:26.859Z","expiresAt":"2020-01-01T00:00:00Z","source":"manual","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
    static let checkActiveUntil = #"{"ok":true,"id":6,"active":true,"expiresAt":"2026-12-22T00:31:45.833Z"}"#
    static let checkActiveLifetime = #"{"ok":true,"id":13,"active":true,"expiresAt":null}"#
    static let checkInactive = #"{"ok":true,"id":15,"active":false}"#
    static let checkUnknownEntitlement =
        #"{"ok":false,"id":17,"error":{"code":"not_found","message":"the catalog has no entitlement \"gold\"; define it first or check a product instead"}}"#
    static let claimedOne = #"{"ok":true,"id":7,"claimed":1}"#
    static let claimedNone = #"{"ok":true,"id":8,"claimed":0}"#
    static let revoked =
        #"{"ok":true,"id":19,"membership":{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
    static let revokeNotFound =
        #"{"ok":false,"id":21,"error":{"code":"not_found","message":"no membership has the id \"mem_0000000000000\""}}"#
    static let memberships =
        #"{"ok":true,"id":24,"memberships":[{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"},{"id":"mem_bydn4qrrzzhrt","productId":"prod_pro_yearly","planId":"plan_yearly","user":"user_42","device":"dev_B","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":"2027-12-20T23:00:00Z","source":"stripe","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"},{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","user":"user_42","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}]}"#
    static let noMemberships = #"{"ok":true,"id":26,"memberships":[]}"#
    static let definePro = #"{"ok":true,"id":2,"entitlement":"pro","products":["prod_pro_monthly","prod_pro_yearly"]}"#
    static let defineBeta = #"{"ok":true,"id":3,"entitlement":"beta","products":[]}"#
    static let catalog = #"{"ok":true,"id":4,"entitlements":{"beta":[],"pro":["prod_pro_monthly","prod_pro_yearly"]}}"#
    static let emptyCatalog = #"{"ok":true,"id":4,"entitlements":{}}"#
    static let snapshot =
        #"{"ok":true,"id":5,"file":"snapshot-00000000000000000004.snap","sequence":4,"bytes":166,"durationMs":2,"memberships":2}"#

    // Lifecycle: one session of the server, in order (a trial bought in the sandbox with an idempotency
    // key, replayed, its renewal, a billing issue; a lifetime guest purchase claimed and refunded), then
    // what a watching connection of another session was pushed (a grant, then its cancellation).
    static let trialGrant =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"trialing","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","source":"app_store","willRenew":true,"periodType":"trial","renewState":"will_renew","renewsCount":0,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null}]}}"#
    static let replayedGrant =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"trialing","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","source":"app_store","willRenew":true,"periodType":"trial","renewState":"will_renew","renewsCount":0,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null}]},"idempotentReplay":true}"#
    static let transferredGrant =
        #"{"ok":true,"seq":3,"membership":{"id":"mem_02jvebs5y1bhz","productId":"prod_premium_monthly","user":"user_10","status":"active","isActive":true,"createdAt":"2026-11-26T11:39:02.621Z","expiresAt":"2026-12-26T11:39:02.621Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase","transactions":[{"id":"2000000777","originalTransactionId":"2000000777","type":"purchase","time":"2026-11-26T11:39:02.621Z","expiresAt":"2026-12-26T11:39:02.621Z","revokedAt":null}]},"transferredFrom":{"user":"user_9"}}"#
    static let conflict =
        #"{"ok":false,"error":{"code":"conflict","message":"the idempotency key \"order-7\" was used by an earlier grant that created membership mem_92dpedc461kg5 for another product, subject, plan or source; use a new key for a new grant"}}"#
    static let renewalApplied =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]},"applied":true}"#
    static let renewalDuplicate =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]},"applied":false,"reason":"duplicate"}"#
    static let billingIssue =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"past_due","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"billing_issue","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","billingIssueDetectedAt":"2026-12-23T00:00:00Z","gracePeriodExpiresAt":"2027-02-06T00:00:00Z","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]},"applied":true}"#
    static let cancellationOutOfOrder =
        #"{"ok":true,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"past_due","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"billing_issue","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","billingIssueDetectedAt":"2026-12-23T00:00:00Z","gracePeriodExpiresAt":"2027-02-06T00:00:00Z","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]},"applied":false,"reason":"out_of_order"}"#
    static let customer =
        #"{"ok":true,"customer":{"entitlements":{"plus":{"isActive":true,"productId":"prod_plus_m","membership":"mem_92dpedc461kg5","expiresAt":"2027-02-06T00:00:00Z","willRenew":true,"periodType":"normal","store":"app_store","latestPurchaseDate":"2026-12-22T00:00:00Z","originalPurchaseDate":"2026-11-22T07:02:38.862Z","billingIssueDetectedAt":"2026-12-23T00:00:00Z","unsubscribeDetectedAt":null}},"activeProducts":["prod_plus_m"],"allPurchasedProductIds":["prod_plus_m"],"latestExpirationDate":"2027-01-22T00:00:00Z","firstSeen":"2026-11-22T07:02:38.862Z","requestDate":"2026-11-22T07:02:38.866Z"}}"#
    static let customerUnknown =
        #"{"ok":true,"customer":{"entitlements":{},"activeProducts":[],"allPurchasedProductIds":[],"latestExpirationDate":null,"firstSeen":null,"requestDate":"2026-11-22T07:02:38.866Z"}}"#
    static let history =
        #"{"ok":true,"history":[{"time":"2026-11-22T07:02:38.865Z","actor":"local","action":"revoke","reason":"refund","sequence":7,"membership":{"id":"mem_cz4anm64j98tp","productId":"prod_lifetime","user":"user_7","device":"dev_8","status":"revoked","isActive":false,"createdAt":"2026-11-22T07:02:38.865Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T07:02:38.865Z","reason":"refund","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}},{"time":"2026-11-22T07:02:38.865Z","actor":"local","action":"claim","reason":"login","sequence":6,"membership":{"id":"mem_cz4anm64j98tp","productId":"prod_lifetime","user":"user_7","device":"dev_8","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:38.865Z","expiresAt":null,"source":"promotional","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}},{"time":"2026-11-22T07:02:38.865Z","actor":"local","action":"grant","membership":{"id":"mem_cz4anm64j98tp","productId":"prod_lifetime","device":"dev_8","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:38.865Z","expiresAt":null,"source":"promotional","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}},{"time":"2026-11-22T07:02:38.864Z","actor":"local","action":"billing_issue","reason":"card declined","sequence":4,"eventId":"evt_2","eventTime":"2026-12-23T00:00:00Z","membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"past_due","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"billing_issue","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","billingIssueDetectedAt":"2026-12-23T00:00:00Z","gracePeriodExpiresAt":"2027-02-06T00:00:00Z","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]}},{"time":"2026-11-22T07:02:38.863Z","actor":"local","action":"renewal","sequence":3,"eventId":"evt_1","eventTime":"2026-12-22T00:00:00Z","membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2027-01-22T00:00:00Z","source":"app_store","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":1,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null},{"id":"tx_3","originalTransactionId":"tx_1","type":"renewal","time":"2026-12-22T00:00:00Z","expiresAt":"2027-01-22T00:00:00Z","revokedAt":null}]}},{"time":"2026-11-22T07:02:38.862Z","actor":"local","action":"grant","reason":"first purchase","sequence":2,"membership":{"id":"mem_92dpedc461kg5","productId":"prod_plus_m","user":"user_7","device":"dev_7","status":"trialing","isActive":true,"createdAt":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","source":"app_store","willRenew":true,"periodType":"trial","renewState":"will_renew","renewsCount":0,"environment":"sandbox","ownership":"purchased","grantType":"purchase","transactions":[{"id":"tx_2","originalTransactionId":"tx_1","type":"trial_started","time":"2026-11-22T07:02:38.862Z","expiresAt":"2026-12-22T07:02:38.862Z","revokedAt":null}]}}]}"#
    static let historyEmpty = #"{"ok":true,"history":[]}"#
    static let historyEntitlement =
        #"{"ok":true,"history":[{"time":"2026-11-22T07:02:38.861Z","actor":"local","action":"define","reason":"launch","sequence":1,"entitlement":"plus","products":["prod_plus_m","prod_plus_y"]}]}"#
    static let watch = #"{"ok":true,"watches":1}"#
    static let unwatch = #"{"ok":true,"watches":0}"#
    static let pushGrant =
        #"{"push":"access","cause":"grant","membership":{"id":"mem_2p12nek6vz5pf","productId":"prod_plus_m","user":"user_9","status":"active","isActive":true,"createdAt":"2026-11-22T07:02:59.507Z","expiresAt":"2026-12-22T07:02:59.507Z","source":"stripe","willRenew":true,"periodType":"normal","renewState":"will_renew","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}}"#
    static let pushCancellation =
        #"{"push":"access","cause":"cancellation","membership":{"id":"mem_2p12nek6vz5pf","productId":"prod_plus_m","user":"user_9","status":"canceled","isActive":true,"createdAt":"2026-11-22T07:02:59.507Z","expiresAt":"2026-12-22T07:02:59.507Z","source":"stripe","willRenew":false,"periodType":"normal","renewState":"canceled","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase","unsubscribeDetectedAt":"2026-11-23T00:00:00Z"}}"#
}

/// Times used by the rendering tests, in milliseconds since the Unix epoch (checked with `date -u`).
enum Instants {
    /// 2026-11-22T12:00:00Z: half a day after the protocol examples' grants.
    static let afterExamples: Int64 = 1_795_348_800_000
    static let second: Int64 = 1000
    static let minute: Int64 = 60 * second
    static let hour: Int64 = 60 * minute
    static let day: Int64 = 24 * hour
}
