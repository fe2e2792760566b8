/// One protocol request: an operation and its fields, written as one JSON line.
///
/// Build one with the operation constructors (`.check(user:...)`, `.grant(...)`, ...), whose parameters
/// are exactly the fields each operation takes, so a misspelt field does not compile. `init(op:fields:)`
/// writes any fields it is given, for an operation or a field this library does not know yet: the server
/// refuses a field the operation does not take (`bad_request`), and `hello` answers which ones each takes.
/// Fields whose value is `nil` are left out.
public struct EntitledRequest: Sendable, Hashable {
    /// The operation name (`"check"`, `"grant"`, ...).
    public var op: String
    /// The other fields, in the order they are written.
    public var fields: [(key: String, value: JSONValue)]

    public init(op: String, fields: [(key: String, value: JSONValue)] = []) {
        self.op = op
        self.fields = fields
    }

    /// Builds a request from optional string fields, leaving out the `nil` ones.
    init(op: String, _ optionalFields: KeyValuePairs<String, String?>) {
        self.op = op
        self.fields = optionalFields.compactMap { key, value in value.map { (key, JSONValue.string($0)) } }
    }

    /// The request as one line of compact JSON, without the newline.
    public var jsonLine: String {
        JSONValue.object([("op", .string(op))] + fields).jsonText
    }

    public static func == (left: EntitledRequest, right: EntitledRequest) -> Bool {
        JSONValue.object([("op", .string(left.op))] + left.fields) == .object([("op", .string(right.op))] + right.fields)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(JSONValue.object([("op", .string(op))] + fields))
    }
}

extension EntitledRequest {
    /// Builds a request from optional fields of any JSON type, leaving out the `nil` ones.
    init(op: String, _ optionalFields: [(key: String, value: JSONValue?)]) {
        self.op = op
        self.fields = optionalFields.compactMap { key, value in value.map { (key, $0) } }
    }
}
