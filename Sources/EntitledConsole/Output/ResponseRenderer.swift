import EntitledClient

/// Turns a server response into what a person reads: sentences for single answers, aligned tables for
/// lists, times in UTC with a relative hint. Pure: the current time is a parameter.
public struct ResponseRenderer: Sendable {
    public var style: TextStyle
    /// The time relative hints are computed against, in milliseconds since the Unix epoch.
    public var now: Int64

    public init(style: TextStyle, now: Int64) {
        self.style = style
        self.now = now
    }

    /// The text for a successful response to `request` of console command `command`: what
    /// `render(command:response:)` shows, then, under a page of `show` or `history` that has more after
    /// it (the answer carries `next`), the `more:` line with the command for the next page; under a page
    /// of `changes`, that line or the command for the changes to come (`feedFollowUp`).
    public func render(command: ConsoleCommand, request: EntitledRequest, response: EntitledResponse) -> String {
        let text = render(command: command, response: response)
        let followUp =
            command == .changes
            ? feedFollowUp(request: request, response: response) : morePages(command: command, request: request, response: response)
        guard let followUp else { return text }
        return text + "\n" + followUp
    }

    /// `more: show user:u1 after=mem_x`: the line that tells how to get the page after this one; `nil`
    /// on the last page (no `next`) and for answers that are not pages.
    public func morePages(command: ConsoleCommand, request: EntitledRequest, response: EntitledResponse) -> String? {
        guard response.isOK, let next = response.next, let text = NextPageCommand.text(command: command, request: request, next: next) else {
            return nil
        }
        return style.yellow("more: ") + text
    }

    /// The text for a successful response to `command`. An error response is rendered by `failure(_:)`.
    public func render(command: ConsoleCommand, response: EntitledResponse) -> String {
        switch command {
        case .check: return check(response)
        case .grant, .revoke:
            guard let membership = response.membership else { break }
            var lines = [membershipTable([membership])] + lifecycleNotes(membership)
            if response.isIdempotentReplay {
                lines.append(
                    style.yellow("replayed: ")
                        + "this purchase (its key or its original transaction) was granted before; this is its membership, nothing new was created"
                )
            }
            if let from = response.transferredFrom {
                let owner = from.user.map { "user:" + $0 } ?? from.device.map { "device:" + $0 } ?? "its owner"
                lines.append(style.yellow("transferred: ") + "the purchase was \(owner)'s; the transfer rule moved it to this user")
            }
            return lines.joined(separator: "\n")
        case .extend:
            if let text = extended(response) { return text }
        case .event:
            guard let membership = response.membership, let outcome = response.eventOutcome else { break }
            return ([membershipTable([membership])] + lifecycleNotes(membership) + [eventOutcome(outcome)]).joined(separator: "\n")
        case .customer:
            guard let customer = response.customer else { break }
            return self.customer(customer)
        case .history:
            guard let history = response.history else { break }
            return self.history(history)
        case .changes:
            guard let page = response.feedPage else { break }
            return changes(page)
        case .watch, .unwatch:
            guard let count = response.watches else { break }
            if count == 0 { return "no watches on this connection" }
            return "\(count) watch\(count == 1 ? "" : "es") on this connection"
                + (command == .watch ? style.dim("; changes are shown as the server pushes them") : "")
        case .show:
            guard let memberships = response.memberships else { break }
            return memberships.isEmpty ? style.dim("(no memberships)") : membershipTable(memberships)
        case .claim:
            guard let count = response["claimed"]?.intValue else { break }
            return "claimed \(count) membership\(count == 1 ? "" : "s")"
        case .define:
            guard let name = response["entitlement"]?.stringValue, let products = response["products"]?.arrayValue else { break }
            let list = products.compactMap(\.stringValue)
            return "\(style.bold(name)) is unlocked by " + (list.isEmpty ? style.dim("no product") : list.joined(separator: ", "))
        case .undefine:
            if let text = undefined(response) { return text }
        case .erase:
            if let text = erased(response) { return text }
        case .catalog:
            guard let catalog = response.catalog else { break }
            if catalog.isEmpty { return style.dim("(no entitlements defined)") }
            var table = TextTable(headers: ["ENTITLEMENT", "PRODUCTS"])
            for (entitlement, products) in catalog {
                table.append([.init(entitlement), .init(products.isEmpty ? "-" : products.joined(separator: ", "))])
            }
            return table.render(style: style)
        case .snapshot:
            guard let file = response["file"]?.stringValue else { break }
            let memberships = response["memberships"]?.intValue ?? 0
            let bytes = response["bytes"]?.intValue ?? 0
            let sequence = response["sequence"]?.intValue ?? 0
            let milliseconds = response["durationMs"]?.intValue ?? 0
            return "wrote \(file): \(memberships) membership\(memberships == 1 ? "" : "s"), \(bytes) bytes, "
                + "through change \(sequence), in \(milliseconds) ms"
        case .ping: return "pong"
        case .reload:
            guard let tokens = response["tokens"]?.intValue else { break }
            return "reloaded the auth file: \(tokens) token\(tokens == 1 ? "" : "s")"
        case .stats:
            if let text = statistics(response) { return text }
        case .export, .webhooks, .raw, .help, .quit, .exit:
            // Not sent as one request (`ParsedCommand` has their own cases): shown as it came, below.
            break
        }
        // A response this console does not know how to show (a newer server): show it as it came.
        return response.line
    }

    /// The text for a line the server pushed after a `watch`: what caused it, then the membership as a
    /// one-line summary. `push grant: mem_x prod_pro trialing, active until T (in 30 days), user:u1`.
    /// A membership that gives no access any more says so of itself only; `remaining`, the `customer`
    /// answer for its owner read after the change, says what access the owner still has through others:
    /// `push expiration: mem_x prod_a expired, no access through it, user:u1; user:u1 still has pro until T`.
    public func push(_ push: EntitledPush, remaining: EntitledResponse? = nil) -> String {
        guard let membership = push.membership else { return push.line }
        let access =
            membership.isActive
            ? style.green(membership.status) + (membership.expiresAt.map { ", access until " + time($0) } ?? ", access for life")
            : (membership.status == "revoked" ? style.red(membership.status) : style.yellow(membership.status)) + ", no access through it"
        let line = style.bold("push \(push.cause ?? push.kind):") + " \(membership.id) \(membership.productId) \(access), \(owner(of: membership))"
        guard !membership.isActive, let remaining, let customer = remaining["customer"] else { return line }
        return line + "; " + remainingAccess(of: membership, customer)
    }

    /// What access the owner of `membership` still has, from its `customer` view: the active entitlements
    /// with their ends, else the active products, else none.
    func remainingAccess(of membership: MembershipInfo, _ customer: JSONValue) -> String {
        let who = membership.user.map { "user:\($0)" } ?? membership.device.map { "device:\($0)" } ?? "the owner"
        var held: [String] = []
        if case .object(let entitlements)? = customer["entitlements"] {
            for (name, entitlement) in entitlements where entitlement["isActive"]?.boolValue == true {
                held.append(name + (entitlement["expiresAt"]?.stringValue.map { " until " + time($0) } ?? " for life"))
            }
        }
        if held.isEmpty, case .array(let products)? = customer["activeProducts"] {
            held = products.compactMap(\.stringValue)
        }
        guard !held.isEmpty else { return style.red("\(who) has no access left") }
        return style.green("\(who) still has ") + held.joined(separator: ", ")
    }

    /// The text for an error response: `(error) not_found: no membership has the id "mem_x"`.
    public func failure(_ failure: ServerFailure) -> String {
        style.red("(error) \(failure.code): ") + failure.message
    }

    func check(_ response: EntitledResponse) -> String {
        guard response["active"]?.boolValue == true else { return style.red("not active") }
        guard let expiresAt = response["expiresAt"]?.stringValue else { return style.green("active") + ", lifetime" }
        return style.green("active") + " until " + time(expiresAt)
    }

    /// A time as the server wrote it, with how far it is from now.
    func time(_ text: String) -> String {
        guard let milliseconds = ProtocolTime.milliseconds(text) else { return text }
        return text + " " + style.dim("(\(ConsoleTime.relative(milliseconds, now: now)))")
    }

    func eventOutcome(_ outcome: EventOutcome) -> String {
        switch outcome {
        case .applied:
            return style.green("applied")
        case .ignored(let reason):
            let why =
                switch reason {
                case "duplicate": "an event with this id was applied before"
                case "out_of_order": "an event newer than this one was applied already"
                case "revoked": "the membership is revoked"
                default: reason
                }
            return style.yellow("not applied (\(reason)): ") + why + "; the membership is unchanged"
        }
    }

    /// The lifecycle times a membership has set, one line each: a billing issue and its grace period, a
    /// cancellation of the renewal, a pause. None for a plain grant.
    func lifecycleNotes(_ membership: MembershipInfo) -> [String] {
        var notes: [String] = []
        if let since = membership.billingIssueDetectedAt {
            notes.append("billing issue since " + time(since) + (membership.gracePeriodExpiresAt.map { ", grace period until " + time($0) } ?? ""))
        } else if let grace = membership.gracePeriodExpiresAt {
            notes.append("grace period until " + time(grace))
        }
        if let since = membership.unsubscribeDetectedAt { notes.append("renewal turned off " + time(since)) }
        if let since = membership.pausedAt { notes.append("paused since " + time(since)) }
        return notes
    }

    /// `user:u1 on device:d1`, `user:u1`, `device:d1 (guest)`.
    func owner(of membership: MembershipInfo) -> String {
        membership.user.map { user in "user:\(user)" + (membership.device.map { " on device:\($0)" } ?? "") }
            ?? membership.device.map { "device:\($0) (guest)" } ?? "-"
    }

    func membershipTable(_ memberships: [MembershipInfo]) -> String {
        var table = TextTable(headers: ["ID", "PRODUCT", "STATUS", "ACTIVE", "EXPIRES", "RENEWS", "SOURCE", "OWNER"])
        let style = style
        for membership in memberships {
            let status = membership.reason.map { "\(membership.status) (\($0))" } ?? membership.status
            let source = membership.environment == "production" ? membership.source : "\(membership.source) (\(membership.environment))"
            table.append([
                .init(membership.id),
                .init(membership.productId),
                // Green for every status that grants access (active, trialing, past_due, canceled, and any a
                // newer server adds), as the ACTIVE column says.
                .init(status, decorate: { membership.isActive ? style.green($0) : membership.status == "revoked" ? style.red($0) : style.yellow($0) }),
                .init(membership.isActive ? "yes" : "no"),
                .init(membership.expiresAt.map(plainTime) ?? "lifetime"),
                .init(membership.willRenew ? "yes" : "no"),
                .init(source),
                .init(owner(of: membership)),
            ])
        }
        return table.render(style: style)
    }

    /// The entitlements as a table, then the products and dates of the whole customer.
    func customer(_ customer: CustomerInfo) -> String {
        var lines: [String] = []
        if customer.entitlements.isEmpty {
            lines.append(style.dim("(no entitlements)"))
        } else {
            var table = TextTable(headers: ["ENTITLEMENT", "ACTIVE", "PRODUCT", "EXPIRES", "RENEWS", "PERIOD", "STORE", "MEMBERSHIP", "NOTES"])
            let style = style
            for (name, entitlement) in customer.entitlements {
                var notes: [String] = []
                if let since = entitlement.billingIssueDetectedAt { notes.append("billing issue since \(since)") }
                if let since = entitlement.unsubscribeDetectedAt { notes.append("renewal turned off \(since)") }
                table.append([
                    .init(name),
                    .init(entitlement.isActive ? "yes" : "no", decorate: { entitlement.isActive ? style.green($0) : style.yellow($0) }),
                    .init(entitlement.productId),
                    .init(entitlement.expiresAt.map(plainTime) ?? "lifetime"),
                    .init(entitlement.willRenew ? "yes" : "no"),
                    .init(entitlement.periodType),
                    .init(entitlement.store),
                    .init(entitlement.membership),
                    .init(notes.joined(separator: ", ")),
                ])
            }
            lines.append(table.render(style: style))
        }
        func list(_ products: [String]) -> String { products.isEmpty ? "-" : products.joined(separator: ", ") }
        lines.append("active products: " + list(customer.activeProducts))
        lines.append("purchased products: " + list(customer.allPurchasedProductIds))
        lines.append("latest expiration: " + (customer.latestExpirationDate.map(plainTime) ?? "-"))
        lines.append("first seen: " + (customer.firstSeen.map(plainTime) ?? "never"))
        return lines.joined(separator: "\n")
    }

    /// The audit trail as a table, in the server's order (newest first). The catalog's entries (history
    /// of an entitlement) have a table of their own.
    func history(_ entries: [HistoryEntry]) -> String {
        if entries.isEmpty { return style.dim("(no history)") }
        func reason(_ entry: HistoryEntry) -> String { entry.reason ?? "-" }
        if entries.allSatisfy({ $0.membership == nil }) {
            var table = TextTable(headers: ["TIME", "ACTOR", "ACTION", "ENTITLEMENT", "PRODUCTS", "REASON"])
            for entry in entries {
                let products = entry.products.map { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") } ?? "-"
                table.append([
                    .init(plainTime(entry.time)), .init(entry.actor), .init(entry.action), .init(entry.entitlement ?? "-"),
                    .init(products), .init(reason(entry)),
                ])
            }
            return table.render(style: style)
        }
        // The EXPIRY column is there only when an entry on the page moved an expiry (an `extend`); the other
        // rows leave it empty, which a table line does not pad.
        let showsExpiry = entries.contains { $0.previousExpiresAt != nil }
        var table = TextTable(headers: ["TIME", "ACTOR", "ACTION", "MEMBERSHIP", "PRODUCT", "REASON"] + (showsExpiry ? ["EXPIRY"] : []))
        for entry in entries {
            let membership = entry.membership?.id ?? entry.entitlement.map { "entitlement:\($0)" } ?? "-"
            let product = entry.membership?.productId ?? entry.products.map { $0.joined(separator: ", ") } ?? "-"
            table.append(
                [
                    .init(plainTime(entry.time)), .init(entry.actor), .init(entry.action), .init(membership), .init(product),
                    .init(reason(entry)),
                ] + (showsExpiry ? [.init(expiryChange(of: entry) ?? "")] : [])
            )
        }
        return table.render(style: style)
    }

    /// `2026-12-22T00:31:45.833Z (in 29 days)`, undecorated (table cells are measured before coloring).
    func plainTime(_ text: String) -> String {
        guard let milliseconds = ProtocolTime.milliseconds(text) else { return text }
        return "\(text) (\(ConsoleTime.relative(milliseconds, now: now)))"
    }
}
