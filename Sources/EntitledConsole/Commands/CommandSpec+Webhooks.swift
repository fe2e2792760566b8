/// The command that speaks to entitled-stores' webhook deliverer rather than to the server: webhooks.
extension CommandSpec {
    static let webhooks = CommandSpec(
        .webhooks,
        arguments: "[NAME] | resume NAME | redeliver NAME ID",
        summary: "Show entitled-stores' webhook endpoints, their lag and failed deliveries; resume one, redeliver a message.",
        details: [
            "Without arguments: a row an endpoint, with its lag (changes not yet delivered), its counts since",
            "entitled-stores started, and its state: delivering, or set aside (after a 410, or nothing delivered",
            "for the retry period) with since when and why, and how many messages were given up.",
            "NAME shows one endpoint in detail, with its given-up messages: id, type, change, attempts, last result.",
            "resume NAME lets a set-aside endpoint deliver again, from where it stopped.",
            "redeliver NAME ID sends the given-up message ID once more, now, and says whether it was taken;",
            "it keeps its webhook-id, so a receiver that already has it can tell.",
            "Neither asks first or needs --yes: they only let delivery go on, as reload and snapshot do.",
            "These go to entitled-stores serve --webhooks at --stores URL (default http://127.0.0.1:7118), with",
            "the admin token of --stores-token-file PATH or ENTITLECTL_STORES_TOKEN (the webhooks file's admin-token-file).",
        ],
        example: "webhooks redeliver crm 2c5e9a1d-0b7f-4d1e-9a55-3f0c8e2b7d41"
    )
}
