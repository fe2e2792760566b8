/// The raw fields of one request line, read by `JSONScanner` before any operation-specific validation.
struct RequestFields {
    var op: String?
    /// Byte range of the `id` value in the line, echoed verbatim (minus whitespace) in the response.
    var id: Range<Int>?
    var user: String?
    var device: String?
    var product: String?
    var entitlement: String?
    var plan: String?
    var source: String?
    var expiresAt: String?
    var duration: String?
    var at: String?
    var membership: String?
    var reason: String?
    var products: [String]?

    /// The first problem with a field's type or a repeated key; reported as `bad_request` once the line
    /// has been read to its end and found to be valid JSON.
    var fieldError: WireError?
    /// Set when `op` is there but not a string: the reason there is no `op` to run.
    var opTypeError: WireError?
    private var seen: UInt32 = 0

    /// Whether the line was a JSON value other than an object.
    var isNotAnObject = false

    /// Reads a whole request line. Throws only for invalid JSON; everything else lands in the fields.
    init(scanning bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) {
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
                let field = try Self.readKey(&scanner)
                try scanner.expect(UInt8(ascii: ":"), "expected ':' after a key")
                if let field {
                    try read(field, from: &scanner)
                } else {
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

    /// Reads a key and returns the field it names, or `nil` for a key the protocol does not define.
    private static func readKey(_ scanner: inout JSONScanner) throws(JSONSyntaxError) -> RequestField? {
        guard scanner.peekSignificant() == UInt8(ascii: "\"") else { throw scanner.error("expected a key in quotes") }
        return try scanner.withStringBytes { RequestField.matching($0) }
    }

    private mutating func read(_ field: RequestField, from scanner: inout JSONScanner) throws(JSONSyntaxError) {
        let bit = UInt32(1) << UInt32(field.rawValue)
        if seen & bit != 0, fieldError == nil {
            fieldError = .badRequest("field \"\(field.description)\" appears more than once")
        }
        seen |= bit

        switch field {
        case .id:
            id = try scanner.skipValue(depth: 1)
        case .products:
            products = try readStringArray(field, from: &scanner)
        default:
            let value = try readOptionalString(field, from: &scanner)
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
            case .id, .products: break
            }
        }
    }

    /// A string, or `nil` for JSON `null` (which means the same as leaving the field out).
    private mutating func readOptionalString(
        _ field: RequestField,
        from scanner: inout JSONScanner
    ) throws(JSONSyntaxError) -> String? {
        switch scanner.peekSignificant() {
        case UInt8(ascii: "\""):
            return try scanner.readString()
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

    private mutating func noteWrongType(_ field: RequestField, expected: String) {
        let error = WireError.badRequest("field \"\(field.description)\" must be \(expected)")
        if field == .op { opTypeError = error }
        if fieldError == nil { fieldError = error }
    }
}
