import EntitledClient

/// What a command that removes or takes back data shows before it asks `y/N`: the membership `revoke`
/// takes back, the entitlement and products `undefine` removes, the memberships `erase` removes.
///
/// Pure functions: the session sends the `lookup` request (a read), hands its answer back to `text`, and
/// asks the `question`. Nothing is sent for the command itself until the person says yes.
public enum ConfirmationPreview {
    /// The read whose answer shows what `request` will touch: the memberships of the membership's owner
    /// (as the session last saw it), the catalog, or the subject's memberships. `nil` when there is
    /// nothing to look up (a membership this session has never seen). Memberships are listed a page at a
    /// time: the lookup asks for the largest page, `EntitledRequest.maximumPageLimit`.
    public static func lookup(_ removal: ConfirmedRemoval, request: EntitledRequest, knowledge: SessionKnowledge) -> EntitledRequest? {
        switch removal {
        case .revoke:
            guard let id = request.string("membership"), let owner = knowledge.membershipOwners[id] else { return nil }
            return .memberships(user: owner.user, device: owner.device, limit: EntitledRequest.maximumPageLimit)
        case .undefine:
            return .catalog
        case .erase:
            return .memberships(user: request.string("user"), device: request.string("device"), limit: EntitledRequest.maximumPageLimit)
        }
    }

    /// The text shown before the question, from the answer to `lookup` (`nil` when nothing was looked up).
    public static func text(_ removal: ConfirmedRemoval, request: EntitledRequest, lookup answer: EntitledResponse?, renderer: ResponseRenderer) -> String {
        if let failure = answer?.error {
            return "cannot show what \(removal.command.rawValue) will touch: " + renderer.failure(failure)
        }
        switch removal {
        case .revoke:
            let id = request.string("membership") ?? "?"
            guard let membership = answer?.memberships?.first(where: { $0.id == id }) else {
                if let answer, answer.next != nil {
                    // Beyond the first page: the owner has more memberships than one lookup lists.
                    let listed = answer.memberships?.count ?? 0
                    return "revoke \(id): it is not among the newest \(listed) memberships of its owner, so it cannot be shown here"
                }
                return "revoke \(id): this session has not seen that membership, so it cannot show it (show SUBJECT lists a subject's)"
            }
            return "this takes back:\n" + renderer.membershipTable([membership])
        case .undefine:
            let name = request.string("entitlement") ?? "?"
            guard let products = answer?.catalog?.first(where: { $0.entitlement == name })?.products else {
                return "the catalog has no entitlement \(name)" + (answer == nil ? "" : "; the server will say so")
            }
            var table = TextTable(headers: ["ENTITLEMENT", "PRODUCTS"])
            table.append([.init(name), .init(products.isEmpty ? "-" : products.joined(separator: ", "))])
            return "this removes from the catalog:\n" + table.render(style: renderer.style)
                + "\nafterwards no product unlocks \(name): checks of entitlement:\(name) answer not active; memberships stay"
        case .erase:
            let subject = subjectWords(request)
            let memberships = answer?.memberships ?? []
            // A page with more after it: the count is a lower bound, and the table shows the newest.
            let count =
                answer?.next == nil
                ? ResponseRenderer.count(memberships.count, "membership")
                : "more than \(memberships.count) memberships (the newest \(memberships.count) below)"
            var lines = [
                "this erases \(subject) for good: \(count), its device links, idempotency keys and every history entry naming it"
            ]
            if !memberships.isEmpty { lines.append(renderer.membershipTable(memberships)) }
            return lines.joined(separator: "\n")
        }
    }

    /// The question, ending in the answer's default: `revoke mem_x? [y/N] `.
    public static func question(_ removal: ConfirmedRemoval, request: EntitledRequest) -> String {
        let target =
            switch removal {
            case .revoke: request.string("membership") ?? ""
            case .undefine: request.string("entitlement") ?? ""
            case .erase: subjectWords(request)
            }
        return "\(removal.command.rawValue) \(target)? [y/N] "
    }

    /// Whether an answer is yes: `y` or `yes`, in any case. Anything else, an empty line included, is no.
    public static func isYes(_ answer: String) -> Bool {
        ["y", "yes"].contains(answer.trimmingCharacters().lowercased())
    }

    /// What the console says when the answer was no.
    public static func declined(_ removal: ConfirmedRemoval) -> String {
        let done =
            switch removal {
            case .revoke: "revoked"
            case .undefine: "removed"
            case .erase: "erased"
            }
        return "nothing was \(done)"
    }

    /// `user:bob device:d1`, as the person would type the subject.
    static func subjectWords(_ request: EntitledRequest) -> String {
        [request.string("user").map { "user:" + $0 }, request.string("device").map { "device:" + $0 }]
            .compactMap { $0 }.joined(separator: " ")
    }
}

extension EntitledRequest {
    /// The string value of the request's field `key`, if it has one.
    func string(_ key: String) -> String? {
        fields.last { $0.key == key }?.value.stringValue
    }
}

extension String {
    /// The text without surrounding whitespace.
    func trimmingCharacters() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
