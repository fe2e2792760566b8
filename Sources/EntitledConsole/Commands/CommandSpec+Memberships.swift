/// The commands that create, move, change and remove memberships: grant, claim, revoke, extend, event, erase.
extension CommandSpec {
    static let grant = CommandSpec(
        .grant,
        arguments: "SUBJECT [SUBJECT] PRODUCT [DURATION | until TIME | lifetime] [source=SOURCE] [plan=PLAN] [OPTION=VALUE...]",
        summary: "Create a membership of PRODUCT for a user, a device (a guest purchase) or both.",
        details: subjectDetails + [
            "DURATION is a whole number and a unit s, min, h, d, w, mo or y (30d, 12h, 1mo, 1y); mo and y are",
            "calendar months and years (a month from January 31 ends on February's last day); until TIME ends",
            "it at TIME.",
            "Without either, or with lifetime, it never expires.",
            "SOURCE is one of \(sources.joined(separator: ", ")); the default is manual.",
            "More options, for store purchases (each defaults to the first value listed):",
            "  renews=no|yes  the store will renew it at its expiry",
            "  period=\(periodTypes.joined(separator: "|"))  env=\(environments.joined(separator: "|"))",
            "  ownership=\(ownerships.joined(separator: "|"))  type=\(grantTypes.joined(separator: "|"))",
            "  transaction=ID  original=ID  the store's transaction and original transaction ids",
            "  key=KEY  an idempotency key: the same grant again with it creates nothing new",
            "  reason=TEXT  kept in the history (quote it when it has spaces: reason=\"gift for a tester\")",
        ],
        example: "grant device:d1 prod_pro 30d source=app_store",
        options: [.source, .plan, .renews, .period, .env, .ownership, .type, .transaction, .original, .key, .reason]
    )

    static let claim = CommandSpec(
        .claim,
        arguments: "device:ID user:ID [reason=TEXT]",
        summary: "A user logs in on a device: the device's guest memberships become the user's.",
        details: [
            "Memberships already claimed by a user stay where they are; a repeated claim moves nothing.",
            "reason=TEXT is kept in the history.",
        ],
        example: "claim device:d1 user:u1",
        options: [.reason]
    )

    static let revoke = CommandSpec(
        .revoke,
        arguments: "MEMBERSHIP [REASON...]",
        summary: "Take a membership back (refund, chargeback, manual); it stays listed as revoked.",
        details: [
            "REASON is free text (the words after the id, reason=TEXT, or one quoted string); the default is manual.",
            "Interactively it shows the membership and asks first; scripts and one-shot commands need --yes.",
        ],
        example: "revoke mem_1ymr6jcw5jqzv refund",
        options: [.reason]
    )

    /// Not confirmed first, unlike `revoke`: an extension only gives more access and takes nothing away,
    /// as a `grant` does, which is not asked either. A mistaken one is put right with `revoke` (and a new
    /// grant); scripts and one-shot commands run it without `--yes`.
    static let extend = CommandSpec(
        .extend,
        arguments: "MEMBERSHIP DURATION | TIME [REASON...]",
        summary: "Give a membership more time: move its expiry later by a DURATION, or to a TIME.",
        details: [
            "DURATION is a whole number and a unit s, min, h, d, w, mo or y (7d, 1mo), as for grant: it is added",
            "to the expiry, or to now when the membership has already expired.",
            "TIME is the new expiry (2027-01-01 is midnight UTC; until TIME also works): later than the current",
            "expiry and than now.",
            "REASON is free text (the words after, reason=TEXT, or one quoted string), kept in the history.",
            "A revoked membership, or one that never expires, cannot be extended.",
            "A DURATION given twice extends twice; a TIME given twice is refused the second time, as not later.",
        ],
        example: "extend mem_1ymr6jcw5jqzv 1mo outage on 2026-11-20",
        options: [.reason]
    )

    static let event = CommandSpec(
        .event,
        arguments: "MEMBERSHIP TYPE id=EVENT [at=TIME] [until TIME] [grace=TIME] [product=PRODUCT] [transaction=ID] [reason=TEXT]",
        summary: "Apply a store's event to a membership: a renewal, a cancellation, a billing issue, a refund...",
        details: [
            "TYPE is one of \(eventTypes.joined(separator: ", ")).",
            "id=EVENT is the store's id of the event: the same id again is ignored as a duplicate.",
            "at=TIME is when the event happened (default: now); one older than the last applied is ignored.",
            "until TIME is the new expiry: required for renewal and extension, optional for resume.",
            "grace=TIME ends a billing_issue's grace period; product=PRODUCT is a product_change's new product.",
            "transaction=ID is the store's transaction; reason=TEXT is kept in the history.",
        ],
        example: "event mem_1ymr6jcw5jqzv renewal id=evt_1 until 2027-01-22",
        options: [.id, .at, .grace, .product, .transaction, .reason]
    )

    static let erase = CommandSpec(
        .erase,
        arguments: "SUBJECT [SUBJECT] [reason=TEXT]",
        summary: "Erase a person (right to be forgotten): every membership, device link and history entry naming them.",
        details: subjectDetails + [
            "It cannot be undone. The history keeps that an erasure happened, without the id; reason=TEXT goes with it.",
            "Interactively it shows the memberships it will remove and asks first; scripts and one-shot commands need --yes.",
        ],
        example: "erase user:u1 reason=\"request 2026-118\"",
        options: [.reason]
    )
}
