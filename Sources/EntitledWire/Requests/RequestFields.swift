/// The raw fields of one request line, read by `JSONScanner` before any operation-specific validation.
///
/// String fields are kept as spans of the line, not Strings: a check names three strings and needs two,
/// and building (then releasing) a String for every field was a fifth of a check's decoding cost.
/// `text(of:)` builds the ones an operation uses. Valid only while the line's bytes are.
struct RequestFields {
    /// The line the spans point into.
    let line: UnsafeRawBufferPointer
    var op: StringSpan?
    /// Byte range of the `id` value in the line, echoed verbatim (minus whitespace) in the response.
    var id: Range<Int>?
    var user: StringSpan?
    var device: StringSpan?
    var product: StringSpan?
    var entitlement: StringSpan?
    var plan: StringSpan?
    var source: StringSpan?
    var expiresAt: StringSpan?
    var duration: StringSpan?
    var at: StringSpan?
    var membership: StringSpan?
    var reason: StringSpan?
    var products: [String]?
    var type: StringSpan?
    var eventId: StringSpan?
    var eventTime: StringSpan?
    var gracePeriodExpiresAt: StringSpan?
    var transactionId: StringSpan?
    var originalTransactionId: StringSpan?
    var willRenew: Bool?
    var periodType: StringSpan?
    var environment: StringSpan?
    var ownership: StringSpan?
    var grantType: StringSpan?
    var idempotencyKey: StringSpan?
    var all: Bool?
    var limit: Int?
    /// `after`: where a page of `memberships` or `history` starts (a `next` of the page before).
    var after: StringSpan?
    /// `grant`'s `purchasedAt`: when the store sold a purchase imported after the fact.
    var purchasedAt: StringSpan?
    /// `grant`'s `renewsCount`: the renewals an imported purchase had before.
    var renewsCount: Int?
    /// `memberships`' `endedAfter`: with `source`, only the memberships whose access had not ended before it.
    var endedAfter: StringSpan?
    var erasures: Bool?
    /// `history` of `export`: whether the audit trail comes with the memberships.
    var history: Bool?
    /// `minSeq`: the change a read must see applied; 0 when the request has none.
    var minSeq: UInt64 = 0
    /// `afterSeq`: the change after which a read of the change feed starts; 0 when the request has none.
    var afterSeq: UInt64 = 0
    /// `wait`: how long (milliseconds) a read of the change feed may wait for a change.
    var wait: Int?
    /// `auth`'s secret: read like any string, never quoted in a message.
    var token: StringSpan?

    /// The first problem with a field's type or a repeated key; reported as `bad_request` once the line
    /// has been read to its end and found to be valid JSON.
    var fieldError: WireError?
    /// Set when `op` is there but not a string: the reason there is no `op` to run.
    var opTypeError: WireError?
    /// The known fields the line has, one `RequestField.bit` each: compared with the operation's
    /// `acceptedFields` in one AND.
    private(set) var seen: UInt64 = 0
    /// The first key the protocol does not define, where it lies in the line: the request is refused
    /// naming it (its value was still read, to find the end of the line and report bad JSON first).
    private(set) var unknownKey: StringSpan?

    /// Whether the line was a JSON value other than an object.
    var isNotAnObject = false

    /// Reads a whole request line. Throws only for invalid JSON; everything else lands in the fields.
    init(scanning bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
        line = bytes
        var scanner = JSONScanner(bytes)
        guard let first = scanner.peekSignificant() else {
            throw scanner.error("expected a JSON object")
        }
        guard first == UInt8(ascii: "{") else {
            try scanner.skipValue()
            try Self.expectEnd(&scanner)
            isNotAnObject = true
            return
        }
        _ = scanner.consume(UInt8(ascii: "{"))
        if !scanner.consume(UInt8(ascii: "}")) {
            repeat {
                let (field, key) = try Self.readKey(&scanner)
                try scanner.expect(UInt8(ascii: ":"), "expected ':' after a key")
                if let field {
                    try read(field, from: &scanner)
                } else {
                    if unknownKey == nil { unknownKey = key }
                    try scanner.skipValue(depth: 1)
                }
            } while scanner.consume(UInt8(ascii: ","))
            try scanner.expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
        }
        try Self.expectEnd(&scanner)
    }

    private static func expectEnd(_ scanner: inout JSONScanner) throws(JSONSyntaxError) {
        guard scanner.peekSignificant() == nil else {
            throw scanner.error("expected the end of the line after the request object")
        }
    }

    /// Reads a key and returns the field it names (`nil` for a key the protocol does not define) and
    /// where the key lies, for the message that refuses an unknown one.
    private static func readKey(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> (RequestField?, StringSpan) {
        guard scanner.peekSignificant() == UInt8(ascii: "\"") else { throw scanner.error("expected a key in quotes") }
        let start = scanner.offset + 1
        let field = try scanner.withStringBytes { RequestField.matching($0) }
        // Not plain: `text(of:)` then decodes it the validating way, whatever it holds (only for a message).
        return (field, StringSpan(start: start, end: scanner.offset - 1, isPlain: false))
    }

    private mutating func read(_ field: RequestField, from scanner: inout JSONScanner) throws(JSONSyntaxError) {
        let bit = field.bit
        if seen & bit != 0, fieldError == nil {
            fieldError = .badRequest("field \"\(field.description)\" appears more than once")
        }
        seen |= bit

        switch field {
        case .id:
            id = try scanner.skipValue(depth: 1)
        case .products:
            products = try readStringArray(field, from: &scanner)
        case .willRenew:
            willRenew = try readBool(field, from: &scanner)
        case .all:
            all = try readBool(field, from: &scanner)
        case .erasures:
            erasures = try readBool(field, from: &scanner)
        case .history:
            history = try readBool(field, from: &scanner)
        case .limit:
            limit = try readCount(field, from: &scanner)
        case .renewsCount:
            renewsCount = try readCount(field, from: &scanner)
        case .minSeq:
            minSeq = try readSequence(field, from: &scanner)
        case .afterSeq:
            afterSeq = try readSequence(field, from: &scanner)
        case .wait:
            wait = try readCount(field, from: &scanner)
        default:
            let value = try readOptionalSpan(field, from: &scanner)
            switch field {
            case .op: op = value
            case .user: user = value
            case .device: device = value
            case .product: product = value
            case .entitlement: entitlement = value
            case .plan: plan = value
            case .source: source = value
            case .expiresAt: expiresAt = value
            case .duration: duration = value
            case .at: at = value
            case .membership: membership = value
            case .reason: reason = value
            case .type: type = value
            case .eventId: eventId = value
            case .eventTime: eventTime = value
            case .gracePeriodExpiresAt: gracePeriodExpiresAt = value
            case .transactionId: transactionId = value
            case .originalTransactionId: originalTransactionId = value
            case .periodType: periodType = value
            case .environment: environment = value
            case .ownership: ownership = value
            case .grantType: grantType = value
            case .idempotencyKey: idempotencyKey = value
            case .token: token = value
            case .after: after = value
            case .purchasedAt: purchasedAt = value
            case .endedAfter: endedAfter = value
            case .id, .products, .willRenew, .all, .limit, .erasures, .minSeq, .renewsCount, .afterSeq, .wait, .history: break
            }
        }
    }

    /// Where a string lies, or `nil` for JSON `null` (which means the same as leaving the field out).
    private mutating func readOptionalSpan(
        _ field: RequestField,
        from scanner: inout JSONScanner
    ) throws(JSONSyntaxError) -> StringSpan? {
        switch scanner.peekSignificant() {
        case UInt8(ascii: "\""):
            return try scanner.readStringSpan()
        case UInt8(ascii: "n") where scanner.consumeNull():
            return nil
        default:
            try scanner.skipValue(depth: 1)
            noteWrongType(field, expected: "a string")
            return nil
        }
    }

    private mutating func readStringArray(
        _ field: RequestField,
        from scanner: inout JSONScanner
    ) throws(JSONSyntaxError) -> [String]? {
        guard scanner.peekSignificant() == UInt8(ascii: "[") else {
            if !scanner.consumeNull() {
                try scanner.skipValue(depth: 1)
                noteWrongType(field, expected: "an array of strings")
            }
            return nil
        }
        _ = scanner.consume(UInt8(ascii: "["))
        var strings: [String] = []
        if scanner.consume(UInt8(ascii: "]")) { return strings }
        repeat {
            if scanner.peekSignificant() == UInt8(ascii: "\"") {
                strings.append(try scanner.readString())
            } else {
                try scanner.skipValue(depth: 2)
                noteWrongType(field, expected: "an array of strings")
            }
        } while scanner.consume(UInt8(ascii: ","))
        try scanner.expect(UInt8(ascii: "]"), "expected ',' or ']' in an array")
        return strings
    }

    /// `true` or `false`, or `nil` for JSON `null`.
    private mutating func readBool(_ field: RequestField, from scanner: inout JSONScanner) throws(JSONSyntaxError) -> Bool? {
        let range = try scanner.skipValue(depth: 1)
        let value = UnsafeRawBufferPointer(rebasing: line[range])
        if ("true" as StaticString).isSpelled(by: value) { return true }
        if ("false" as StaticString).isSpelled(by: value) { return false }
        if !("null" as StaticString).isSpelled(by: value) { noteWrongType(field, expected: "true or false") }
        return nil
    }

    /// A whole number (no sign, fraction or exponent, at most nine digits: the operation checks its range),
    /// or `nil` for JSON `null`.
    private mutating func readCount(_ field: RequestField, from scanner: inout JSONScanner) throws(JSONSyntaxError) -> Int? {
        let range = try scanner.skipValue(depth: 1)
        let value = UnsafeRawBufferPointer(rebasing: line[range])
        if ("null" as StaticString).isSpelled(by: value) { return nil }
        guard (1...9).contains(value.count), value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            noteWrongType(field, expected: "a whole number")
            return nil
        }
        return value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// A change number: a whole number from 0 to 2^63-1 (a change is numbered like the log's), 0 for JSON
    /// `null`. Wider than `readCount`: a busy system's changes pass nine digits.
    private mutating func readSequence(_ field: RequestField, from scanner: inout JSONScanner) throws(JSONSyntaxError) -> UInt64 {
        let range = try scanner.skipValue(depth: 1)
        let value = UnsafeRawBufferPointer(rebasing: line[range])
        if ("null" as StaticString).isSpelled(by: value) { return 0 }
        guard (1...18).contains(value.count), value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            noteWrongType(field, expected: "a change number (a whole number, 0 or more, as a write's \"seq\")")
            return 0
        }
        return value.reduce(0) { $0 * 10 + UInt64($1 - UInt8(ascii: "0")) }
    }

    /// The text of a string field, if the request had one.
    func text(of span: StringSpan?) -> String? {
        span.map { JSONScanner(line).string($0) }
    }

    private mutating func noteWrongType(_ field: RequestField, expected: String) {
        let error = WireError.badRequest("field \"\(field.description)\" must be \(expected)")
        if field == .op { opTypeError = error }
        if fieldError == nil { fieldError = error }
    }
}
