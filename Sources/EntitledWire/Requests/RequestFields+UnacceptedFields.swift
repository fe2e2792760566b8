import EntitledCore

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
    /// better hint than none; its own refusal follows once the key is fixed). `NameSuggestion` compares
    /// (without case, a swap one edit); a field of n letters may be up to n/4 edits off, 1 to 3.
    static func closest(to name: String, for operation: Request.Operation) -> RequestField? {
        let accepted = RequestField.allCases.filter { operation.acceptedFields & $0.bit != 0 }
        return best(name, among: accepted) ?? best(name, among: RequestField.allCases)
    }

    private static func best(_ name: String, among fields: [RequestField]) -> RequestField? {
        NameSuggestion.closest(to: name, among: fields, by: \.description) { max(1, min(3, $0 / 4)) }
    }
}
