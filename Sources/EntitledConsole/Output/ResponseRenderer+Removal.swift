import EntitledClient

extension ResponseRenderer {
    /// The answer to `undefine` (the entitlement and the products it had) or `erase` (how much went);
    /// `nil` when the response does not have that shape.
    func removal(command: String, response: EntitledResponse) -> String? {
        switch command {
        case "undefine":
            guard let name = response["entitlement"]?.stringValue else { return nil }
            let products = response["products"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return "\(style.bold(name)) removed from the catalog"
                + (products.isEmpty ? "" : " (it was unlocked by \(products.joined(separator: ", ")))")
        case "erase":
            guard let erased = response["erased"], let memberships = erased["memberships"]?.intValue,
                let entries = erased["historyEntries"]?.intValue
            else { return nil }
            return "erased \(Self.count(memberships, "membership")) and \(Self.count(entries, "history entry", plural: "history entries"))"
        default:
            return nil
        }
    }

    /// `1 membership`, `3 memberships`.
    static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
        "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
    }
}
