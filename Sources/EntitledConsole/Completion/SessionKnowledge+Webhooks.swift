extension SessionKnowledge {
    /// Takes in the endpoints `webhooks` showed, each with its given-up messages as of now (a redelivered
    /// message is no longer offered).
    public mutating func learn(webhookEndpoints endpoints: [WebhookEndpoint]) {
        for endpoint in endpoints {
            webhookEndpoints[endpoint.name] = Set(endpoint.givenUp.map(\.id))
        }
    }
}
