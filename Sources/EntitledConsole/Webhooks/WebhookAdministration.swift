import EntitledClient

/// entitled-stores' webhook admin routes, as the console uses them. The console knows nothing of HTTP:
/// `entitlectl` implements this over HTTP (`GET /webhooks`, `POST /webhooks/{name}/resume`,
/// `POST /webhooks/{name}/redeliver/{id}`), and the tests with canned answers.
///
/// The methods block until the answer is there, as the session's requests to the server do: the console
/// runs one command at a time, and its session is synchronous.
public protocol WebhookAdministration {
    /// Where the routes are served (`http://127.0.0.1:7118`), named in messages.
    var address: String { get }

    /// Every endpoint's status: `{"endpoints":[...]}`.
    func endpoints() throws(WebhookAdminError) -> WebhookAnswer

    /// Resumes a set-aside endpoint; the answer is the endpoint's status.
    func resume(endpoint: String) throws(WebhookAdminError) -> WebhookAnswer

    /// Sends a given-up message again: `{"delivered":bool,"result":text}`, also when it was not taken.
    func redeliver(endpoint: String, message: String) throws(WebhookAdminError) -> WebhookAnswer
}

/// A JSON answer of the admin routes: the text as received (which `--json` prints) and its value.
public struct WebhookAnswer: Sendable, Hashable {
    public var text: String
    public var json: JSONValue

    /// Parses `text`; a body that is not JSON is `WebhookAdminError.malformed`.
    public init(text: String, from address: String) throws(WebhookAdminError) {
        self.text = text
        do {
            json = try JSONValue(parsing: text)
        } catch {
            throw .malformed(address: address, what: "an answer that is not JSON (\(error))")
        }
    }
}
