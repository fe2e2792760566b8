import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOCore
import NIOHTTP1

/// The one HTTP call the receivers make outside the stores' API clients (`StoreAPIClient`): Google's
/// signing keys, for the Pub/Sub push's token. A call that gets no answer, or a 5xx, is
/// `EntitledUnavailable`'s sibling for the store: the notification is answered 503, so the store delivers
/// it again. Also the URL helpers all the clients use.
struct StoreHTTP: Sendable {
    let client: HTTPClient

    struct Reply {
        var status: Int
        var body: [UInt8]
        var json: JSONValue? { JSONValue(strictUTF8: body) }
    }

    /// Unreachable or failing upstream: retry later.
    struct Unavailable: Error {
        var reason: String
    }

    func get(_ url: String, bearer: String? = nil) async throws(Unavailable) -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        return try await execute(request, what: url)
    }

    private func execute(_ request: HTTPClientRequest, what: String) async throws(Unavailable) -> Reply {
        do {
            let response = try await client.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 1 << 20)
            let reply = Reply(status: Int(response.status.code), body: Array(buffer: body))
            if reply.status >= 500 { throw Unavailable(reason: "\(Self.host(what)) answered \(reply.status)") }
            return reply
        } catch let unavailable as Unavailable {
            throw unavailable
        } catch {
            throw Unavailable(reason: "\(Self.host(what)) did not answer: \(error)")
        }
    }

    static func host(_ url: String) -> String {
        URL(string: url).map { "\($0.scheme ?? "https")://\($0.host ?? "?")\($0.port.map { ":\($0)" } ?? "")" } ?? url
    }

    /// `text` with everything but RFC 3986's unreserved characters percent-encoded: safe in a form value
    /// and in a URL path segment (purchase tokens, product ids).
    static func escaped(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
