/// What a `webhooks` line asks of entitled-stores' webhook admin routes.
public enum WebhookCommand: Sendable, Hashable {
    /// `webhooks`: every endpoint, one row each.
    case list
    /// `webhooks NAME`: one endpoint in detail, with its given-up messages.
    case show(endpoint: String)
    /// `webhooks resume NAME`: a set-aside endpoint goes on delivering.
    case resume(endpoint: String)
    /// `webhooks redeliver NAME ID`: a given-up message is sent again, once, now.
    case redeliver(endpoint: String, message: String)
}
