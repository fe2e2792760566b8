/// The parse functions of the catalog's commands that take arguments: define, undefine (`catalog` is
/// one of the plain operations of `CommandParser+Admin`).
extension CommandParser {
    static func define(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        guard let entitlement = arguments.takePositional() else {
            throw arguments.failure("an ENTITLEMENT name is required")
        }
        let products = arguments.takeRest()
        guard !products.isEmpty else {
            throw arguments.failure("at least one PRODUCT is required; to remove \(entitlement) from the catalog: undefine \(entitlement)")
        }
        return arguments.request(.define(entitlement: entitlement, products: products, reason: options[.reason]))
    }

    static func undefine(_ arguments: inout ArgumentList) throws(ConsoleUsageError) -> ParsedCommand {
        let options = try arguments.takeOptions()
        guard let entitlement = arguments.takePositional() else {
            throw arguments.failure("an ENTITLEMENT name is required (catalog lists them)")
        }
        try arguments.finish()
        return arguments.request(.undefine(entitlement: entitlement, reason: options[.reason]))
    }
}
