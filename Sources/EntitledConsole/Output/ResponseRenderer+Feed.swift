import EntitledClient

/// A page of the change feed (`changes`) as a table, the line under it, and the last line of an export.
extension ResponseRenderer {
    /// One row per item, oldest first: `SEQ TIME ACTOR ACTION SUBJECT MEMBERSHIP PRODUCT STATUS REASON`.
    /// A membership's change shows its owner as the change left it (and, for a transfer, whom it was taken
    /// from); `define` and `undefine` the entitlement and its products; `erase` what it removed, since
    /// the erased person is named nowhere any more.
    func changes(_ page: FeedPageInfo) -> String {
        if page.changes.isEmpty { return style.dim("(no changes)") }
        var table = TextTable(headers: ["SEQ", "TIME", "ACTOR", "ACTION", "SUBJECT", "MEMBERSHIP", "PRODUCT", "STATUS", "REASON"])
        for change in page.changes {
            let entry = change.entry
            var row: [TextTable.Cell] = [.init(String(change.sequence)), .init(plainTime(entry.time)), .init(entry.actor), .init(entry.action)]
            if let membership = entry.membership {
                let from = change.formerOwner.flatMap { owner in owner.user.map { "user:" + $0 } ?? owner.device.map { "device:" + $0 } }
                let style = style
                // Colored as the membership table colors a status: green while it gives access.
                let status: @Sendable (String) -> String = {
                    membership.isActive ? style.green($0) : membership.status == "revoked" ? style.red($0) : style.yellow($0)
                }
                row += [
                    .init(owner(of: membership) + (from.map { " (from \($0))" } ?? "")), .init(membership.id), .init(membership.productId),
                    .init(membership.status, decorate: status),
                ]
            } else if let entitlement = entry.entitlement {
                let products = entry.products.map { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") } ?? "-"
                row += [.init("-"), .init("entitlement:" + entitlement), .init(products), .init("-")]
            } else if let erased = entry.erased {
                row += [.init("-"), .init(erasure(erased, detached: change.detachedMemberships.count)), .init("-"), .init("-")]
            } else {
                row += [.init("-"), .init("-"), .init("-"), .init("-")]
            }
            table.append(row + [.init(entry.reason ?? "-")])
        }
        return table.render(style: style)
    }

    /// `2 memberships, 5 history entries` (`; 1 detached` when memberships of other users lost the
    /// erased device).
    private func erasure(_ erased: ErasureCounts, detached: Int) -> String {
        Self.count(erased.memberships, "membership") + ", " + Self.count(erased.historyEntries, "history entry", plural: "history entries")
            + (detached > 0 ? "; \(detached) detached" : "")
    }

    /// The line under a page of `changes`: while changes follow at once (`next` below `newest`),
    /// `more: changes ... after=NEXT`; once up to date, the same command for the changes still to come.
    func feedFollowUp(request: EntitledRequest, response: EntitledResponse) -> String? {
        guard response.isOK, let page = response.feedPage,
            let command = NextPageCommand.text(command: .changes, request: request, next: String(page.next))
        else { return nil }
        if page.hasMore { return style.yellow("more: ") + command }
        return style.dim("up to date at change \(page.next); later changes: ") + command
    }

    /// `exported 250 memberships and 731 history entries as of change 251 to x.jsonl; the change feed
    /// continues after it: changes after=251`: the export's last line, with what to read next.
    public func exportSummary(_ summary: ExportSummary, plan: ExportPlan) -> String {
        var text = "exported " + Self.count(summary.memberships, "membership")
        if plan.includesHistory { text += " and " + Self.count(summary.historyEntries, "history entry", plural: "history entries") }
        text += " as of change \(summary.sequence)"
        if let file = plan.file { text += " to \(file)" }
        return text + "; the change feed continues after it: changes after=\(summary.sequence)"
    }
}
