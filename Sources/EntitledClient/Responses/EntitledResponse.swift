/// One response line from the server: the text exactly as received, and its parsed form.
public struct EntitledResponse: Sendable, Hashable {
    /// The response line as the server wrote it, without the newline.
    public let line: String
    /// The parsed line: always a JSON object.
    public let body: JSONValue

    /// Parses a response line; a line that is not a JSON object with a boolean `ok` is not a response.
    public init(line: String) throws(EntitledClientError) {
        let body: JSONValue
        do {
            body = try JSONValue(parsing: line)
        } catch {
            throw .malformedResponse(line: line, reason: error.description)
        }
        guard body["ok"]?.boolValue != nil else {
            throw .malformedResponse(line: line, reason: "a response must be a JSON object with a boolean \"ok\"")
        }
        self.line = line
        self.body = body
    }

    /// Whether the server carried the request out.
    public var isOK: Bool { body["ok"]?.boolValue == true }

    /// The failure the server reported, when `isOK` is false.
    public var error: ServerFailure? {
        guard !isOK else { return nil }
        let error = body["error"]
        return ServerFailure(
            code: ServerErrorCode(rawValue: error?["code"]?.stringValue ?? "unknown"),
            message: error?["message"]?.stringValue ?? "the server gave no message"
        )
    }

    public subscript(key: String) -> JSONValue? { body[key] }

    /// The `seq` of a write's answer (`grant`, `claim`, `revoke`, `define`, `undefine`, `event`, `erase`):
    /// the number of the change it committed as, or of the newest change it saw when it changed nothing.
    /// Give it as `minSeq` to a read on another connection or node to read this write there. `nil` for
    /// other answers, and from a server older than protocol version 3.
    public var sequence: UInt64? {
        guard case .number(let text)? = body["seq"] else { return nil }
        return UInt64(text)
    }

    /// The `membership` of a `grant`, `revoke` or `event` response.
    public var membership: MembershipInfo? { body["membership"].flatMap(MembershipInfo.init(json:)) }

    /// The `memberships` of a `memberships` response: one page of them (see `next`).
    public var memberships: [MembershipInfo]? {
        body["memberships"]?.arrayValue?.compactMap(MembershipInfo.init(json:))
    }

    /// The `next` of a page of `memberships` or `history`: where the next page starts, to be passed back
    /// unchanged as the next request's `after` (`EntitledRequest.page(after:)`). `nil` on the last page
    /// (and from a server older than protocol version 4, which does not page).
    public var next: String? { body["next"]?.stringValue }

    /// Whether a `grant` was answered from an earlier grant with the same `idempotencyKey`: its
    /// membership is that grant's, and nothing new was created.
    public var isIdempotentReplay: Bool { body["idempotentReplay"]?.boolValue == true }

    /// For a `grant` that moved a purchase another owner held (the server's transfer rule): the user, or
    /// for a guest purchase the device, it was taken from; `nil` otherwise.
    /// An `extend`'s answer: the expiry the membership had before it.
    public var previousExpiresAt: String? { body["previousExpiresAt"]?.stringValue }

    public var transferredFrom: (user: String?, device: String?)? {
        guard let from = body["transferredFrom"] else { return nil }
        return (from["user"]?.stringValue, from["device"]?.stringValue)
    }

    /// What an `event` did: applied, or ignored and why; `nil` for other responses.
    public var eventOutcome: EventOutcome? {
        guard let applied = body["applied"]?.boolValue else { return nil }
        return applied ? .applied : .ignored(reason: body["reason"]?.stringValue ?? "unknown")
    }

    /// The `customer` of a `customer` response.
    public var customer: CustomerInfo? { body["customer"].flatMap(CustomerInfo.init(json:)) }

    /// The `history` of a `history` response, newest first: one page of it (see `next`); entries that
    /// cannot be read are skipped.
    public var history: [HistoryEntry]? {
        body["history"]?.arrayValue?.compactMap(HistoryEntry.init(json:))
    }

    /// The `watches` of a `watch` or `unwatch` response: how many the connection now holds.
    public var watches: Int? { body["watches"]?.intValue }

    /// `erase`: what it removed.
    public var erased: ErasureCounts? { body["erased"].flatMap(ErasureCounts.init(json:)) }

    /// The `entitlements` of a `catalog` response: each name with its products, in the server's order.
    public var catalog: [(entitlement: String, products: [String])]? {
        body["entitlements"]?.objectMembers?.map { member in
            (member.key, member.value.arrayValue?.compactMap(\.stringValue) ?? [])
        }
    }
}

/// What an `event` did to its membership.
public enum EventOutcome: Sendable, Hashable {
    /// The membership changed.
    case applied
    /// Nothing changed: `duplicate` (its `eventId` was applied before), `out_of_order` (older than the
    /// last event applied), `revoked` (the membership was revoked), or a reason a newer server added.
    case ignored(reason: String)
}

/// An error response: the machine-readable code (`not_found`, `bad_request`, ...) and the server's sentence.
/// `unavailable` means the write was certainly not carried out (the server's disk is full or failed, or a
/// cluster node's database could not commit it), so retrying it later cannot make a duplicate.
/// `outcome_unknown` means it may or may not have been (a cluster node lost its commit's answer): retry with
/// the same idempotency key, or read to find out. `over_limit` means the read would go past the work one
/// request may do (`customer`, `history`, or `check`/`memberships` at an earlier `at`, of a subject with
/// more than 10,000 memberships): asking again gets the same answer, so nothing in this library retries it;
/// the message says what to ask instead (`memberships`, page by page; `check` now). `loading` means the
/// server is starting and carried nothing out; it closes the connection once it is ready: `EntitledPool`
/// and `EntitledConnection` ask again on a new connection by themselves (for the request's timeout and for
/// `loadingWait`), and return the answer when that time is up; an `EntitledAsyncConnection`, which is one
/// connection, returns it at once and its owner connects again. PROTOCOL.md, "What an answer means", has every code.
public struct ServerFailure: Sendable, Hashable, CustomStringConvertible {
    public var code: ServerErrorCode
    public var message: String

    public init(code: ServerErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
