import EntitledClient
import Foundation

/// The webhooks file (`entitled-stores serve --webhooks FILE`, Protocol/WEBHOOKS.md): the endpoints to
/// deliver the change feed to, the token that reads the feed, and the token of the admin routes.
///
/// ```json
/// {"token-file": "/etc/entitled/feed.token", "admin-token-file": "/etc/entitled/webhooks-admin.token",
///  "endpoints": [{"name": "crm", "url": "https://crm.example.com/hooks/entitled",
///                 "secrets": ["whsec_..."], "actions": ["grant", "revoke", "refund"]}]}
/// ```
///
/// Every key is checked: an unknown one is refused by name, as a misspelt filter would otherwise send
/// everything.
public struct WebhooksConfiguration: Sendable, Hashable {
    public var endpoints: [WebhookEndpoint]
    /// Where each endpoint starts the first time it runs (no state file yet).
    public var starts: [String: WebhookStart]
    /// The token `changes` is read with: the admin role's (`nil` for a server without `--auth`).
    public var feedToken: String?
    /// The bearer token of `GET /webhooks` and its `POST` routes; without one they are not served.
    public var adminToken: String?

    static let fileKeys: Set<String> = ["token-file", "admin-token-file", "endpoints"]
    /// The actions a change may have: the membership writes, the event types, the catalog's and erasure.
    public static let actions = ["grant", "claim", "revoke", "transfer", "extend"] + EntitledRequest.Names.eventTypes + ["define", "undefine", "erase"]
    static let endpointKeys: Set<String> = [
        "name", "url", "secrets", "actions", "products", "entitlements", "timeout-seconds", "concurrency", "retry-days", "start",
    ]

    /// Reads and checks the file at `path`.
    public static func read(path: String) throws(WebhooksConfigurationError) -> WebhooksConfiguration {
        guard let data = FileManager.default.contents(atPath: path) else { throw .init(path, "cannot be read") }
        guard let json = JSONValue(strictUTF8: Array(data)), let members = json.objectMembers else {
            throw .init(path, "is not a JSON object")
        }
        return try parse(members, path: path)
    }

    static func parse(_ members: [(key: String, value: JSONValue)], path: String) throws(WebhooksConfigurationError) -> WebhooksConfiguration {
        if let unknown = members.first(where: { !fileKeys.contains($0.key) }) {
            throw .init(path, "has an unknown key \"\(unknown.key)\"; the keys are \(fileKeys.sorted().joined(separator: ", "))")
        }
        if let repeated = repeatedKey(members) { throw .init(path, "has the key \"\(repeated)\" twice") }
        let object = Dictionary(members, uniquingKeysWith: { first, _ in first })
        var configuration = WebhooksConfiguration(endpoints: [], starts: [:])
        configuration.feedToken = try object["token-file"].map { value throws(WebhooksConfigurationError) in try token(value, key: "token-file", path: path) }
        configuration.adminToken = try object["admin-token-file"].map { value throws(WebhooksConfigurationError) in
            try token(value, key: "admin-token-file", path: path)
        }
        if let admin = configuration.adminToken, admin.utf8.count < 16 {
            throw .init(path, "admin-token-file holds a token shorter than 16 bytes: give a random one of at least 16")
        }
        guard let list = object["endpoints"]?.arrayValue, !list.isEmpty else { throw .init(path, "needs \"endpoints\": a list of at least one endpoint") }
        for (index, item) in list.enumerated() {
            let (endpoint, start) = try self.endpoint(item, at: index, path: path)
            guard !configuration.endpoints.contains(where: { $0.name == endpoint.name }) else {
                throw .init(path, "names endpoint \"\(endpoint.name)\" twice")
            }
            configuration.endpoints.append(endpoint)
            configuration.starts[endpoint.name] = start
        }
        return configuration
    }

    private static func endpoint(_ item: JSONValue, at index: Int, path: String) throws(WebhooksConfigurationError) -> (WebhookEndpoint, WebhookStart) {
        let place = "endpoint \(index + 1)"
        guard let members = item.objectMembers else { throw .init(path, "\(place) is not an object") }
        if let unknown = members.first(where: { !endpointKeys.contains($0.key) }) {
            throw .init(path, "\(place) has an unknown key \"\(unknown.key)\"; an endpoint's keys are \(endpointKeys.sorted().joined(separator: ", "))")
        }
        if let repeated = repeatedKey(members) { throw .init(path, "\(place) has the key \"\(repeated)\" twice") }
        let object = Dictionary(members, uniquingKeysWith: { first, _ in first })
        guard let name = object["name"]?.stringValue, WebhookEndpoint.isValidName(name) else {
            throw .init(path, "\(place) needs a \"name\" of 1 to 64 letters, digits, - or _")
        }
        let named = "endpoint \"\(name)\""
        guard let url = object["url"]?.stringValue, let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
            throw .init(path, "\(named) needs a \"url\" starting with https:// (or http://)")
        }
        guard let secrets = object["secrets"]?.arrayValue?.compactMap(\.stringValue), !secrets.isEmpty else {
            throw .init(path, "\(named) needs \"secrets\": a list of at least one whsec_ secret (two while rolling to a new one)")
        }
        for secret in secrets {
            guard secret.hasPrefix("whsec_"), let key = Data(base64Encoded: String(secret.dropFirst(6))), key.count >= 24, key.count <= 64 else {
                throw .init(path, "\(named) has a secret that is not whsec_ followed by the base64 of 24 to 64 random bytes")
            }
        }
        func set(_ key: String) throws(WebhooksConfigurationError) -> Set<String>? {
            guard let value = object[key] else { return nil }
            guard let list = value.arrayValue?.compactMap(\.stringValue), list.count == value.arrayValue?.count, !list.isEmpty else {
                throw .init(path, "\(named): \"\(key)\" must be a list of at least one string")
            }
            return Set(list)
        }
        func number(_ key: String, _ range: ClosedRange<Int>, default value: Int) throws(WebhooksConfigurationError) -> Int {
            guard let json = object[key] else { return value }
            guard let number = json.intValue, range.contains(number) else {
                throw .init(path, "\(named): \"\(key)\" must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        if let actions = try set("actions") {
            let known = Set(WebhooksConfiguration.actions)
            if let unknown = actions.sorted().first(where: { !known.contains($0) }) {
                throw .init(path, "\(named): \"actions\" names \"\(unknown)\", which is no action; the actions are \(WebhooksConfiguration.actions.joined(separator: ", "))")
            }
        }
        let start: WebhookStart
        switch object["start"]?.stringValue {
        case nil where object["start"] == nil, "newest": start = .newest
        case "oldest": start = .oldest
        default: throw .init(path, "\(named): \"start\" must be \"newest\" (the default) or \"oldest\"")
        }
        let endpoint = WebhookEndpoint(
            name: name, url: url, secrets: secrets,
            filter: WebhookFilter(actions: try set("actions"), products: try set("products"), entitlements: try set("entitlements")),
            timeout: .seconds(try number("timeout-seconds", 1...300, default: 15)), concurrency: try number("concurrency", 1...256, default: 16),
            retryPeriod: .seconds(Int64(try number("retry-days", 1...30, default: 3)) * 86_400)
        )
        return (endpoint, start)
    }

    /// A key given twice: which of the two was meant cannot be told.
    private static func repeatedKey(_ members: [(key: String, value: JSONValue)]) -> String? {
        var seen = Set<String>()
        return members.first { !seen.insert($0.key).inserted }?.key
    }

    private static func token(_ value: JSONValue, key: String, path: String) throws(WebhooksConfigurationError) -> String {
        guard let file = value.stringValue else { throw .init(path, "\(key): must be the path of a token file") }
        do throws(TokenFile.Failure) {
            return try TokenFile.readToken(atPath: file)
        } catch {
            throw .init(path, "\(key): \(error.message)")
        }
    }
}

/// Where a new endpoint starts reading the change feed.
public enum WebhookStart: String, Sendable, Hashable {
    /// After the feed's newest change when it is first run: it gets the changes made after it was added.
    case newest
    /// From the oldest change the feed still holds (its retention): a backfill of what the feed keeps.
    case oldest
}

/// A webhooks file that cannot be used; the message names the file and what is wrong.
public struct WebhooksConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    init(_ path: String, _ problem: String) { message = "the webhooks file \(path) \(problem)" }
    public var description: String { message }
}
