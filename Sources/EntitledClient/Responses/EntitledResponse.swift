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
            code: error?["code"]?.stringValue ?? "unknown",
            message: error?["message"]?.stringValue ?? "the server gave no message"
        )
    }

    public subscript(key: String) -> JSONValue? { body[key] }

    /// The `membership` of a `grant` or `revoke` response.
    public var membership: MembershipInfo? { body["membership"].flatMap(MembershipInfo.init(json:)) }

    /// The `memberships` of a `memberships` response.
    public var memberships: [MembershipInfo]? {
        body["memberships"]?.arrayValue?.compactMap(MembershipInfo.init(json:))
    }

    /// The `entitlements` of a `catalog` response: each name with its products, in the server's order.
    public var catalog: [(entitlement: String, products: [String])]? {
        body["entitlements"]?.objectMembers?.map { member in
            (member.key, member.value.arrayValue?.compactMap(\.stringValue) ?? [])
        }
    }
}

/// An error response: the machine-readable code (`not_found`, `bad_request`, ...) and the server's sentence.
public struct ServerFailure: Sendable, Hashable, CustomStringConvertible {
    public var code: String
    public var message: String

    public var description: String { "\(code): \(message)" }
}
