import AsyncHTTPClient
import EntitledConsole

/// entitled-stores' webhook admin routes over HTTP, for the console's `webhooks` command: each call one
/// request with the admin token as a bearer token, waited for (the console's session is synchronous).
///
/// Its own client rather than `HTTPClient.shared`, for `--timeout` as its connect and read timeouts: a
/// receiver that hangs must not hang the console. Made on the first `webhooks` command.
final class StoresAdministration: WebhookAdministration {
    /// `--stores`, without a trailing slash: named in every message.
    let address: String
    /// The admin token and where it came from; `nil` when none was given (nothing is sent then).
    let token: StoresToken?
    /// Seconds to wait for each answer (`--timeout`).
    let timeout: Double
    private lazy var client: HTTPClient = {
        let wait = Int64(timeout * 1000)
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .milliseconds(wait), read: .milliseconds(wait)))
        // A refused connection is reported at once, not tried again until the connect timeout: the
        // console's person is waiting, and a receiver that is not there will not be there in a second.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(configuration: configuration)
    }()
    private var madeClient = false

    init(address: String, token: StoresToken?, timeout: Double) {
        self.address = address.hasSuffix("/") ? String(address.dropLast()) : address
        self.token = token
        self.timeout = timeout
    }

    deinit {
        if madeClient { try? client.syncShutdown() }
    }

    func endpoints() throws(WebhookAdminError) -> WebhookAnswer {
        try exchange(path: "/webhooks", post: false, accepting: [200])
    }

    func resume(endpoint: String) throws(WebhookAdminError) -> WebhookAnswer {
        try exchange(path: "/webhooks/\(Self.segment(endpoint))/resume", post: true, accepting: [200])
    }

    func redeliver(endpoint: String, message: String) throws(WebhookAdminError) -> WebhookAnswer {
        // 502 carries the same JSON: the endpoint did not take the message, which the console reports.
        try exchange(path: "/webhooks/\(Self.segment(endpoint))/redeliver/\(Self.segment(message))", post: true, accepting: [200, 502])
    }

    /// Sends one request and returns its JSON answer when its status is one of `accepting`.
    private func exchange(path: String, post: Bool, accepting: Set<Int>) throws(WebhookAdminError) -> WebhookAnswer {
        guard let token else { throw .missingToken(address: address) }
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: address + path, method: post ? .POST : .GET)
        } catch {
            throw .badAddress(address: address, reason: "\(error)")
        }
        var withToken = request
        withToken.headers.add(name: "Authorization", value: "Bearer \(token.value)")
        let response: HTTPClient.Response
        do {
            madeClient = true
            response = try client.execute(request: withToken).wait()
        } catch {
            throw .unreachable(address: address, reason: Self.reason(error))
        }
        let status = Int(response.status.code)
        let body = response.body.map { String(buffer: $0) } ?? ""
        let firstLine = String(body.prefix { $0 != "\n" })
        if accepting.contains(status) { return try WebhookAnswer(text: body, from: address) }
        switch status {
        case 401: throw .refusedToken(address: address, origin: token.origin)
        case 404: throw .notFound(address: address, reason: firstLine)
        default: throw .unexpectedStatus(address: address, status: status, body: firstLine)
        }
    }

    /// A name or id as one path segment: anything but unreserved characters percent-encoded, so a `/` or
    /// a space in it cannot change the route.
    static func segment(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            let character = Character(Unicode.Scalar(byte))
            if byte < 0x80, character.isLetter || character.isNumber || "-._~".contains(character) {
                encoded.append(character)
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }

    /// What stood in the way, in a few words: `connection refused`, `timed out`.
    static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        if text.lowercased().contains("refused") { return "connection refused" }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .connectTimeout, .readTimeout: return "no answer in time"
            default: return client.description
            }
        }
        return text
    }
}

extension String {
    /// The text with `0` before it up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
