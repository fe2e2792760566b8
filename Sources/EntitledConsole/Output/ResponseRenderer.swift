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

    /// The text for a successful response to `command`. An error response is rendered by `failure(_:)`.
    public func render(command: String, response: EntitledResponse) -> String {
        switch command {
        case "check": return check(response)
        case "grant", "revoke":
            guard let membership = response.membership else { break }
            return membershipTable([membership])
        case "show":
            guard let memberships = response.memberships else { break }
            return memberships.isEmpty ? style.dim("(no memberships)") : membershipTable(memberships)
        case "claim":
            guard let count = response["claimed"]?.intValue else { break }
            return "claimed \(count) membership\(count == 1 ? "" : "s")"
        case "define":
            guard let name = response["entitlement"]?.stringValue, let products = response["products"]?.arrayValue else { break }
            let list = products.compactMap(\.stringValue)
            return "\(style.bold(name)) is unlocked by " + (list.isEmpty ? style.dim("no product") : list.joined(separator: ", "))
        case "catalog":
            guard let catalog = response.catalog else { break }
            if catalog.isEmpty { return style.dim("(no entitlements defined)") }
            var table = TextTable(headers: ["ENTITLEMENT", "PRODUCTS"])
            for (entitlement, products) in catalog {
                table.append([.init(entitlement), .init(products.isEmpty ? "-" : products.joined(separator: ", "))])
            }
            return table.render(style: style)
        case "snapshot":
            guard let file = response["file"]?.stringValue else { break }
            let memberships = response["memberships"]?.intValue ?? 0
            let bytes = response["bytes"]?.intValue ?? 0
            let sequence = response["sequence"]?.intValue ?? 0
            let milliseconds = response["durationMs"]?.intValue ?? 0
            return "wrote \(file): \(memberships) membership\(memberships == 1 ? "" : "s"), \(bytes) bytes, "
                + "through change \(sequence), in \(milliseconds) ms"
        case "ping": return "pong"
        default: break
        }
        // A response this console does not know how to show (a newer server): show it as it came.
        return response.line
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
        guard let milliseconds = ConsoleTime.milliseconds(fromServerTime: text) else { return text }
        return text + " " + style.dim("(\(ConsoleTime.relative(milliseconds, now: now)))")
    }

    func membershipTable(_ memberships: [MembershipInfo]) -> String {
        var table = TextTable(headers: ["ID", "PRODUCT", "STATUS", "ACTIVE", "EXPIRES", "SOURCE", "OWNER"])
        let style = style
        for membership in memberships {
            let status = membership.reason.map { "\(membership.status) (\($0))" } ?? membership.status
            let owner =
                membership.user.map { user in "user:\(user)" + (membership.device.map { " on device:\($0)" } ?? "") }
                ?? membership.device.map { "device:\($0) (guest)" } ?? "-"
            table.append([
                .init(membership.id),
                .init(membership.productId),
                // Green for every status that grants access (active, trialing, past_due, canceled, and any a
                // newer server adds), as the ACTIVE column says.
                .init(status, decorate: { membership.isActive ? style.green($0) : membership.status == "revoked" ? style.red($0) : style.yellow($0) }),
                .init(membership.isActive ? "yes" : "no"),
                .init(membership.expiresAt.map(plainTime) ?? "lifetime"),
                .init(membership.source),
                .init(owner),
            ])
        }
        return table.render(style: style)
    }

    /// `2026-12-22T00:31:45.833Z (in 29 days)`, undecorated (table cells are measured before coloring).
    private func plainTime(_ text: String) -> String {
        guard let milliseconds = ConsoleTime.milliseconds(fromServerTime: text) else { return text }
        return "\(text) (\(ConsoleTime.relative(milliseconds, now: now)))"
    }
}
