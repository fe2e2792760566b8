/// entitled-stores' webhook endpoints (`webhooks`), one in detail (`webhooks NAME`), and the answers of
/// `webhooks resume` and `webhooks redeliver`.
extension ResponseRenderer {
    /// One row per endpoint: `NAME URL LAG QUEUED DELIVERED FAILED RETRIED STATE`.
    public func webhookEndpoints(_ endpoints: [WebhookEndpoint]) -> String {
        if endpoints.isEmpty { return style.dim("(no webhook endpoints)") }
        var table = TextTable(headers: ["NAME", "URL", "LAG", "QUEUED", "DELIVERED", "FAILED", "RETRIED", "STATE"])
        for endpoint in endpoints {
            table.append(
                [
                    .init(endpoint.name), .init(endpoint.url), .init(String(endpoint.lag)), .init(String(endpoint.queued)),
                    .init(String(endpoint.delivered)), .init(String(endpoint.failed)), .init(String(endpoint.retried)),
                    state(of: endpoint),
                ]
            )
        }
        return table.render(style: style)
    }

    /// `delivering`, or `set aside since T: reason`, then `, given up N` when messages were given up:
    /// green while all is well, red while set aside, yellow for given-up messages alone.
    func state(of endpoint: WebhookEndpoint) -> TextTable.Cell {
        var text = "delivering"
        if let aside = endpoint.setAside { text = "set aside since \(plainTime(aside.since)): \(aside.reason)" }
        if !endpoint.givenUp.isEmpty { text += ", given up \(endpoint.givenUp.count)" }
        let style = style
        let setAside = endpoint.setAside != nil
        let givenUp = !endpoint.givenUp.isEmpty
        return .init(text, decorate: { setAside ? style.red($0) : givenUp ? style.yellow($0) : style.green($0) })
    }

    /// The endpoint's fields as name/value lines, then its given-up messages as a table (or a line saying
    /// there are none), with the command that sends one again.
    public func webhookEndpoint(_ endpoint: WebhookEndpoint) -> String {
        var fields = TextTable(headers: [])
        let style = style
        let rows: [(String, TextTable.Cell)] = [
            ("name", .init(endpoint.name)), ("url", .init(endpoint.url)), ("state", state(of: endpoint)),
            ("lag", .init("\(endpoint.lag) (delivered up to change \(endpoint.cursor) of \(endpoint.newest))")),
            ("queued", .init("\(endpoint.queued) (\(endpoint.inFlight) in flight)")),
            ("delivered", .init(String(endpoint.delivered))), ("failed", .init(String(endpoint.failed))),
            ("retried", .init(String(endpoint.retried))),
        ]
        for (name, value) in rows { fields.append([.init(name + ":", decorate: { style.bold($0) }), value]) }
        var lines = [fields.render(style: style)]
        guard let example = endpoint.givenUp.first else {
            lines.append(style.dim("(no given-up messages)"))
            return lines.joined(separator: "\n")
        }
        var table = TextTable(headers: ["ID", "TYPE", "SEQ", "ATTEMPTS", "LAST RESULT", "FIRST TRIED", "GAVE UP"])
        for message in endpoint.givenUp {
            table.append(
                [
                    .init(message.id), .init(message.type), .init(String(message.sequence)), .init(String(message.attempts)),
                    .init(message.lastResult), .init(plainTime(message.firstTriedAt)), .init(plainTime(message.gaveUpAt)),
                ]
            )
        }
        lines.append("given up:")
        lines.append(table.render(style: style))
        lines.append(style.dim("send one again with: ") + "webhooks redeliver \(endpoint.name) \(example.id)")
        return lines.joined(separator: "\n")
    }

    /// `resumed crm` and the endpoint as it now is.
    public func webhookResumed(_ endpoint: WebhookEndpoint) -> String {
        style.green("resumed ") + endpoint.name + "\n" + webhookEndpoint(endpoint)
    }

    /// `redelivered: crm took MSG: delivered (HTTP 200)` or, when the endpoint did not take it, why.
    public func webhookRedelivery(endpoint: String, message: String, delivered: Bool, result: String) -> String {
        delivered
            ? style.green("redelivered: ") + "\(endpoint) took \(message): \(result)"
            : style.red("not delivered: ") + "\(endpoint) did not take \(message): \(result); it stays given up"
    }
}
