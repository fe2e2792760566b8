import EntitledClient

/// The `webhooks` command: not a request to the server but to entitled-stores' webhook admin routes,
/// through `webhookAdministration`.
extension ConsoleSession {
    /// Runs one `webhooks` command and shows its answer: with `--json` the JSON as received (for
    /// `webhooks NAME`, that endpoint's object of the list), else tables and sentences.
    func webhooks(_ command: WebhookCommand) -> CommandOutcome {
        guard let administration = webhookAdministration else {
            standardError(style.red("error: ") + "this console does not reach entitled-stores (no webhook administration)")
            return .usageError
        }
        let renderer = ResponseRenderer(style: style, now: ConsoleTime.nowMilliseconds())
        do throws(WebhookAdminError) {
            switch command {
            case .list:
                let answer = try administration.endpoints()
                let endpoints = try Self.endpoints(in: answer, from: administration)
                knowledge.learn(webhookEndpoints: endpoints)
                standardOutput(printsJSON ? answer.text : renderer.webhookEndpoints(endpoints))
                return .succeeded
            case .show(let name):
                let answer = try administration.endpoints()
                let endpoints = try Self.endpoints(in: answer, from: administration)
                knowledge.learn(webhookEndpoints: endpoints)
                guard let index = endpoints.firstIndex(where: { $0.name == name }) else {
                    let known = endpoints.isEmpty ? "it has none" : "its endpoints are " + endpoints.map(\.name).joined(separator: ", ")
                    throw WebhookAdminError.notFound(address: administration.address, reason: "no webhook endpoint \(name); \(known)")
                }
                let object = answer.json["endpoints"]?.arrayValue?[index]
                standardOutput(printsJSON ? (object?.jsonText ?? "") : renderer.webhookEndpoint(endpoints[index]))
                return .succeeded
            case .resume(let name):
                let answer = try administration.resume(endpoint: name)
                guard let endpoint = WebhookEndpoint(json: answer.json) else {
                    throw WebhookAdminError.malformed(address: administration.address, what: "an endpoint status it cannot read: \(answer.text)")
                }
                knowledge.learn(webhookEndpoints: [endpoint])
                standardOutput(printsJSON ? answer.text : renderer.webhookResumed(endpoint))
                return .succeeded
            case .redeliver(let name, let message):
                let answer = try administration.redeliver(endpoint: name, message: message)
                guard let delivered = answer.json["delivered"]?.boolValue, let result = answer.json["result"]?.stringValue else {
                    throw WebhookAdminError.malformed(address: administration.address, what: "a redelivery answer it cannot read: \(answer.text)")
                }
                let text = printsJSON ? answer.text : renderer.webhookRedelivery(endpoint: name, message: message, delivered: delivered, result: result)
                // Not taken is the endpoint's answer, as an error response is the server's: status 1.
                if delivered { standardOutput(text) } else { standardError(text) }
                return delivered ? .succeeded : .failedOnServer
            }
        } catch {
            standardError(style.red("error: ") + error.message)
            return error.outcome
        }
    }

    private static func endpoints(in answer: WebhookAnswer, from administration: any WebhookAdministration) throws(WebhookAdminError) -> [WebhookEndpoint] {
        guard let endpoints = WebhookEndpoint.list(from: answer.json) else {
            throw .malformed(address: administration.address, what: "an endpoint list it cannot read: \(answer.text)")
        }
        return endpoints
    }
}
