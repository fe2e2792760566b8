import EntitledClient

/// The writes a receiver makes for one notification, through its gateway: finding the membership of a
/// purchase, granting it, applying events to it; and what they did, for the notification's outcome.
struct MembershipWriter {
    let gateway: any EntitledGateway
    /// What the notification did so far.
    private(set) var applied = 0
    private(set) var duplicates = 0
    private(set) var outOfOrder = 0
    /// Events ignored because the membership is revoked (a refund, an operator's revoke).
    private(set) var onRevoked = 0
    /// The types of the events applied, in order (a grant is `grant`): a reconciliation's drift by kind.
    private(set) var appliedKinds: [String] = []

    init(gateway: any EntitledGateway) {
        self.gateway = gateway
    }

    /// The newest membership holding the subscription started by transaction `original`, if any.
    func membership(ofOriginalTransaction original: String) async throws(ReceiveFailure) -> MembershipInfo? {
        try await read(.memberships(originalTransactionId: original)).memberships?.first
    }

    /// The newest membership holding the subscription started by transaction `original`, as `entitled`
    /// wrote it (the membership object of PROTOCOL.md), if any.
    func membershipObject(ofOriginalTransaction original: String) async throws(ReceiveFailure) -> JSONValue? {
        try await read(.memberships(originalTransactionId: original)).body["memberships"]?.arrayValue?.first
    }

    /// The newest membership holding transaction `id`, if any.
    func membership(ofTransaction id: String) async throws(ReceiveFailure) -> MembershipInfo? {
        try await read(.memberships(transactionId: id)).memberships?.first
    }

    /// Sends `grant` and returns the membership it created, found (the purchase was reported before) or
    /// moved (the transfer rule). A grant the server refuses is refused (`malformed`, with its message),
    /// except a purchase another user keeps (`conflict`): then `nil`.
    mutating func grant(_ grant: EntitledRequest) async throws(ReceiveFailure) -> MembershipInfo? {
        let response = try await send(grant)
        if let failure = response.error {
            if failure.code == .conflict { return nil }
            throw .refused(NotificationRefusal(.malformed, "entitled refused the grant: \(failure.message)"))
        }
        if response.isIdempotentReplay {
            duplicates += 1
        } else {
            applied += 1
            appliedKinds.append("grant")
        }
        return response.membership
    }

    /// Applies an `event` request and counts what it did; returns the membership after it.
    ///
    /// - Parameter now: for what a store's API says is so now (a reconciliation, an import; milliseconds
    ///   since the epoch): an event `entitled` ignores as older than the newest it applied to the membership
    ///   (`out_of_order`) is sent again dated `now`. Dated at the store's own time (a renewal's purchase, a
    ///   refund's revocation), a change whose notification was missed while a later one arrived would
    ///   otherwise never be applied, and a reconciliation would report the membership as agreeing.
    @discardableResult
    mutating func apply(_ event: EntitledRequest, redatingTo now: Int64? = nil) async throws(ReceiveFailure) -> MembershipInfo? {
        var response = try await sendEvent(event)
        if let now, response.eventOutcome == .ignored(reason: "out_of_order") {
            var redated = event
            if let index = redated.fields.firstIndex(where: { $0.key == "eventTime" }) {
                redated.fields[index].value = .string(ProtocolTime.string(milliseconds: now))
                // Ignored, the first try left no trace: its event id is free for the second.
                response = try await sendEvent(redated)
            }
        }
        switch response.eventOutcome {
        case .applied?:
            applied += 1
            appliedKinds.append(event.fields.first { $0.key == "type" }?.value.stringValue ?? "event")
        case .ignored(let reason)? where reason == "duplicate": duplicates += 1
        case .ignored(let reason)? where reason == "revoked": onRevoked += 1
        default: outOfOrder += 1
        }
        return response.membership
    }

    /// Sends an `event` request; one `entitled` refuses is refused.
    private func sendEvent(_ event: EntitledRequest) async throws(ReceiveFailure) -> EntitledResponse {
        let response = try await send(event)
        if let failure = response.error {
            throw .refused(NotificationRefusal(.malformed, "entitled refused the event: \(failure.message)"))
        }
        return response
    }

    /// The notification's outcome from what its writes did.
    var outcome: NotificationOutcome {
        if applied > 0 { return .applied(changes: applied) }
        if outOfOrder > 0 { return .ignored("older than what entitled has applied for this purchase") }
        if onRevoked > 0 { return .ignored("the membership of this purchase is revoked (refunded or taken back), which later events do not change") }
        return .duplicate
    }

    private func read(_ request: EntitledRequest) async throws(ReceiveFailure) -> EntitledResponse {
        let response = try await send(request)
        if let failure = response.error {
            throw .refused(NotificationRefusal(.malformed, "entitled refused a lookup: \(failure.message)"))
        }
        return response
    }

    /// Sends `request`; an error answer that may succeed later is `unavailable` (the store delivers the
    /// notification again), one that says the notification cannot be applied is returned for the caller.
    private func send(_ request: EntitledRequest) async throws(ReceiveFailure) -> EntitledResponse {
        let response: EntitledResponse
        do {
            response = try await gateway.send(request)
        } catch {
            throw .unavailable(error)
        }
        if let failure = response.error, !failure.code.refusesTheNotification {
            throw .unavailable(EntitledUnavailable("entitled answered \(failure.code.rawValue): \(failure.message)"))
        }
        return response
    }
}
