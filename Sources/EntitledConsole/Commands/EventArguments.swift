/// Which of `event`'s arguments each event type needs or refuses, in the console's own words.
///
/// The server checks the same rules on the wire fields (Protocol/PROTOCOL.md, "Lifecycle events") and
/// would answer `field "expiresAt" is required for a renewal event`; a person typed `until TIME`, not
/// `expiresAt`, so the console checks first and names what to type. Nothing is sent when a rule fails.
///
/// These rules restate the server's (`lifecycleEvent()` in
/// Sources/EntitledWire/Requests/RequestFields+Validation.swift), which the console must not import:
/// change one, change the other and the table in PROTOCOL.md. EventArgumentsProtocolTests holds this
/// type to that table.
enum EventArguments {
    /// The types whose `expiresAt` (the console's `until TIME`) is required, and those that take one.
    static let untilRequired: Set<String> = ["renewal", "extension"]
    static let untilAllowed: Set<String> = ["renewal", "extension", "resume"]

    /// What is wrong with the arguments given to an event of `type`, or `nil` when they fit.
    /// A type the console does not know is the server's to judge (a newer server may have it): `nil`.
    static func problem(type: String, until: Bool, grace: Bool, product: Bool) -> String? {
        guard CommandSpec.eventTypes.contains(type) else { return nil }
        if untilRequired.contains(type) && !until {
            return "\(type) needs `until TIME`: the new end of the period, such as until 2027-01-01"
        }
        if until && !untilAllowed.contains(type) {
            return "\(type) does not take `until TIME` (only renewal, extension and resume do)"
        }
        if type == "product_change" && !product {
            return "product_change needs `product=PRODUCT`: the product the subscription moved to"
        }
        if product && type != "product_change" {
            return "\(type) does not take `product=` (only product_change does)"
        }
        if grace && type != "billing_issue" {
            return "\(type) does not take `grace=` (only billing_issue does)"
        }
        return nil
    }
}
