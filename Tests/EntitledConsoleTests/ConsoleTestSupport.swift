import EntitledClient
import EntitledConsole
import Testing

/// What a console line turns into when it is a protocol request: the console command (which decides how
/// the answer is shown) and the exact request line that goes to the server.
struct SentRequest: Equatable, CustomStringConvertible {
    var command: String
    var line: String

    var description: String { "\(command) -> \(line)" }
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

/// Response lines copied from Protocol/PROTOCOL.md, section 6.
enum ProtocolLines {
    static let pong = #"{"ok":true,"id":1}"#
    static let guestGrant =
        #"{"ok":true,"id":5,"membership":{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store"}}"#
    static let lifetimeGrant =
        #"{"ok":true,"id":12,"membership":{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional"}}"#
    static let expiredGrant =
        #"{"ok":true,"id":33,"membership":{"id":"mem_fg8dr9hvxd94a","productId":"old","device":"dev_Z","status":"expired","isActive":false,"createdAt":"2026-11-22T00:32:26.859Z","expiresAt":"2020-01-01T00:00:00Z","source":"manual"}}"#
    static let checkActiveUntil = #"{"ok":true,"id":6,"active":true,"expiresAt":"2026-12-22T00:31:45.833Z"}"#
    static let checkActiveLifetime = #"{"ok":true,"id":13,"active":true,"expiresAt":null}"#
    static let checkInactive = #"{"ok":true,"id":15,"active":false}"#
    static let checkUnknownEntitlement =
        #"{"ok":false,"id":17,"error":{"code":"not_found","message":"the catalog has no entitlement \"gold\"; define it first or check a product instead"}}"#
    static let claimedOne = #"{"ok":true,"id":7,"claimed":1}"#
    static let claimedNone = #"{"ok":true,"id":8,"claimed":0}"#
    static let revoked =
        #"{"ok":true,"id":19,"membership":{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund"}}"#
    static let revokeNotFound =
        #"{"ok":false,"id":21,"error":{"code":"not_found","message":"no membership has the id \"mem_0000000000000\""}}"#
    static let memberships =
        #"{"ok":true,"id":24,"memberships":[{"id":"mem_dnc456md2j73z","productId":"prod_pro_yearly","user":"user_42","status":"revoked","isActive":false,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":null,"source":"promotional","revokedAt":"2026-11-22T00:31:50.960Z","reason":"refund"},{"id":"mem_bydn4qrrzzhrt","productId":"prod_pro_yearly","planId":"plan_yearly","user":"user_42","device":"dev_B","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.834Z","expiresAt":"2027-12-20T23:00:00Z","source":"stripe"},{"id":"mem_1ymr6jcw5jqzv","productId":"prod_pro_monthly","planId":"plan_monthly","user":"user_42","device":"dev_A","status":"active","isActive":true,"createdAt":"2026-11-22T00:31:45.833Z","expiresAt":"2026-12-22T00:31:45.833Z","source":"app_store"}]}"#
    static let noMemberships = #"{"ok":true,"id":26,"memberships":[]}"#
    static let definePro = #"{"ok":true,"id":2,"entitlement":"pro","products":["prod_pro_monthly","prod_pro_yearly"]}"#
    static let defineBeta = #"{"ok":true,"id":3,"entitlement":"beta","products":[]}"#
    static let catalog = #"{"ok":true,"id":4,"entitlements":{"beta":[],"pro":["prod_pro_monthly","prod_pro_yearly"]}}"#
    static let emptyCatalog = #"{"ok":true,"id":4,"entitlements":{}}"#
    static let snapshot =
        #"{"ok":true,"id":5,"file":"snapshot-00000000000000000004.snap","sequence":4,"bytes":166,"durationMs":2,"memberships":2}"#
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
