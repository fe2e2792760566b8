/// The commands that read memberships and access: check, show, customer, history.
extension CommandSpec {
    static let check = CommandSpec(
        .check,
        arguments: "SUBJECT [SUBJECT] [PRODUCT | entitlement:NAME] [at=TIME]",
        summary: "Is access active now (or at TIME)? Any product, one product or one entitlement.",
        details: subjectDetails + [
            "PRODUCT counts only that product; entitlement:NAME only the products the catalog gives NAME.",
            "at=TIME evaluates expiry at TIME, an RFC 3339 time or a date (2027-01-01 is midnight UTC).",
        ],
        example: "check user:u1 entitlement:pro",
        options: [.at]
    )

    static let show = CommandSpec(
        .show,
        arguments: "SUBJECT [SUBJECT] [at=TIME] | transaction=ID | original=ID [limit=N] [after=ID]",
        summary: "List the memberships a subject can see, or those of a store transaction, newest first, as a table.",
        details: subjectDetails + [
            "at=TIME computes each status at TIME instead of now.",
            "transaction=ID lists the memberships holding the store's transaction ID (a purchase or a renewal);",
            "original=ID those of the subscription that transaction ID started (its originalTransactionId).",
            "limit=N shows at most N memberships, from 1 to 1000; the server's default is 100.",
            "When more follow, a more: line under the table gives the command for the next page (after=ID).",
        ],
        example: "show user:u1 device:d1",
        options: [.at, .transaction, .original, .limit, .after]
    )

    static let customer = CommandSpec(
        .customer,
        arguments: "SUBJECT [SUBJECT]",
        summary: "Show what a subject is entitled to, entitlement by entitlement (RevenueCat's CustomerInfo).",
        details: subjectDetails + ["Each entitlement shows the membership that gives it, then the products and dates."],
        example: "customer user:u1"
    )

    static let history = CommandSpec(
        .history,
        arguments: "SUBJECT [SUBJECT] | entitlement:NAME [limit=N] [after=CURSOR]",
        summary: "Show the audit trail of a subject's memberships or of an entitlement, newest first.",
        details: subjectDetails + [
            "entitlement:NAME shows how the catalog defined NAME over time instead.",
            "limit=N shows at most N entries, from 1 to 1000; the server's default is 100.",
            "When more follow, a more: line under the table gives the command for the next page (after=CURSOR).",
        ],
        example: "history user:u1 limit=20",
        options: [.limit, .after]
    )
}
