import AsyncHTTPClient
import EntitledClient
import Foundation
import NIOCore
import NIOHTTP1

/// The few HTTP calls the receivers make of the stores' APIs (Google's OAuth token, the Play Developer API
/// and Google's signing keys; Stripe's invoice payments), over AsyncHTTPClient. A call that gets no answer,
/// or a 5xx, is `EntitledUnavailable`'s sibling for the store: the notification is answered 503, so the
/// store delivers it again.
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

    /// POSTs an empty JSON object (`{}`): the body of calls that name everything in their URL
    /// (Google Play's `:acknowledge`).
    func postEmptyJSON(_ url: String, bearer: String) async throws(Unavailable) -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(bearer)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{}"))
        return try await execute(request, what: url)
    }

    func postForm(_ url: String, _ fields: [(String, String)]) async throws(Unavailable) -> Reply {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = fields.map { "\($0.0)=\(Self.escaped($0.1))" }.joined(separator: "&")
        request.body = .bytes(ByteBuffer(string: form))
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
