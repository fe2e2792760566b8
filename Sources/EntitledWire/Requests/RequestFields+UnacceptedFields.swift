extension RequestFields {
    /// Whether the request has a key the protocol does not define or a field `operation` does not take.
    ///
    /// On every request, checks included: one optional test and one AND.
    @inline(__always)
    func hasUnacceptedField(for operation: Request.Operation) -> Bool {
        unknownKey != nil || seen & ~operation.acceptedFields != 0
    }

    /// The `bad_request` that refuses a request with an unaccepted field: the first unknown key in line
    /// order (with the field meant, when one is close), or else the first field `operation` does not take
    /// in the protocol's order. Nothing the request asked for is done: a misspelt `entitlement` must not
    /// become a check of anything, a misspelt `duration` a grant for life.
    func unacceptedFieldError(for operation: Request.Operation) -> WireError {
        let takes = Self.takenFields(by: operation)
        if let unknownKey {
            let name = text(of: unknownKey) ?? ""
            if let meant = FieldSuggestion.closest(to: name, for: operation) {
                return .badRequest("unknown field \"\(Self.printable(name))\" (did you mean \"\(meant.description)\"?)")
            }
            return .badRequest("unknown field \"\(Self.printable(name))\"; \(takes)")
        }
        let unused = seen & ~operation.acceptedFields
        let field = RequestField.allCases.first { unused & $0.bit != 0 } ?? .op
        return .badRequest("field \"\(field.description)\" is not used by \(operation.rawValue); \(takes)")
    }

    /// `check takes user, device, product, entitlement, at (and id)`, for the messages above.
    private static func takenFields(by operation: Request.Operation) -> String {
        let names = operation.acceptedFieldNames
        guard !names.isEmpty else { return "\(operation.rawValue) takes no field besides op and id" }
        return "\(operation.rawValue) takes \(names.joined(separator: ", ")) (and id)"
    }
}

/// The field a misspelt key most likely meant.
enum FieldSuggestion {
    /// The known field closest to `name`, if one is close enough to be a slip of the keyboard: first among
    /// the fields `operation` takes, then among every field (a field the operation does not use is still a
    /// better hint than none; its own refusal follows once the key is fixed). Compared without case, by
    /// edit distance with transpositions (`entitlment`, `duraton`, `expires_at`, `ID` all find theirs).
    static func closest(to name: String, for operation: Request.Operation) -> RequestField? {
        let key = Array(name.lowercased().unicodeScalars)
        guard key.count <= 64 else { return nil }
        let accepted = RequestField.allCases.filter { operation.acceptedFields & $0.bit != 0 }
        return best(key, among: accepted) ?? best(key, among: RequestField.allCases)
    }

    private static func best(_ key: [Unicode.Scalar], among fields: [RequestField]) -> RequestField? {
        var found: (field: RequestField, distance: Int)?
        for field in fields {
            let candidate = Array(field.description.lowercased().unicodeScalars)
            let allowed = max(1, min(3, candidate.count / 4))
            let distance = editDistance(key, candidate)
            if distance <= allowed, distance < (found?.distance ?? .max) { found = (field, distance) }
        }
        return found?.field
    }

    /// Levenshtein distance counting a swap of two neighbours as one edit (optimal string alignment).
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousRow: [Int] = []
        var row = Array(0...b.count)
        for i in 1...a.count {
            let beforePrevious = previousRow
            previousRow = row
            row = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                row[j] = min(previousRow[j] + 1, row[j - 1] + 1, previousRow[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    row[j] = min(row[j], beforePrevious[j - 2] + 1)
                }
            }
        }
        return row[b.count]
    }
}
