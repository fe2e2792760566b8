/// The commands that read the server's changes in order and take a full copy of its memberships:
/// changes, export. Both need an admin token.
extension CommandSpec {
    static let changes = CommandSpec(
        .changes,
        arguments: "[SUBJECT [SUBJECT]] [after=SEQ] [limit=N]",
        summary: "Show the change feed: every change the server made, oldest first, a page at a time.",
        details: [
            "after=SEQ shows the changes after change SEQ (a page's next, or an export's seq); without it, from the",
            "oldest change the feed holds.",
            "limit=N shows at most N items, from 1 to 1000 (a change's items stay together); the server's default is 100.",
            "SUBJECT (user:ID, device:ID or both) keeps what concerns it, and the erasures; catalog changes are left out.",
            "A row is one item: its change number (SEQ), time, actor, action, subject, membership, product, status",
            "and reason; define and undefine show the entitlement and its products, erase what it removed.",
            "When more follow, a more: line under the table gives the command for the next page; once the page",
            "is up to date, the line under it gives the command for the changes that come later.",
            "An admin token is needed when the server requires authentication.",
        ],
        example: "changes after=120 limit=20",
        options: [.after, .limit]
    )

    static let export = CommandSpec(
        .export,
        arguments: "[history] [to FILE] [limit=N]",
        summary: "Write a full copy of every membership, as of one change, as JSON lines.",
        details: [
            #"The first line is {"export":{"seq":E,"time":T},"entitlements":{...}}: the change E the copy is as of,"#,
            #"and the catalog. Then one {"membership":{...}} line a membership, in creation order; with history,"#,
            #"each page's memberships are followed by their audit entries, one {"history":{...}} line each."#,
            "to FILE writes the lines to FILE (mode 0600) under a temporary name, renamed to FILE once complete: a",
            "failed export leaves no file, and an existing FILE is replaced only then. Without it: standard output.",
            "limit=N reads N memberships a page, from 1 to 1000 (the default); every page is read on one connection.",
            "Then it says how many memberships and the change E (on standard error when the lines go to standard",
            "output): the change feed continues after it, with changes after=E.",
            "An admin token is needed when the server requires authentication.",
        ],
        example: "export history to entitled-export.jsonl",
        options: [.limit]
    )
}
