import EntitledClient

extension ResponseRenderer {
    /// The answer to `undefine`: the entitlement and the products it had; `nil` when the response does not
    /// have that shape.
    func undefined(_ response: EntitledResponse) -> String? {
        guard let name = response["entitlement"]?.stringValue else { return nil }
        let products = response["products"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return "\(style.bold(name)) removed from the catalog"
            + (products.isEmpty ? "" : " (it was unlocked by \(products.joined(separator: ", ")))")
    }

    /// The answer to `erase`: how much went; `nil` when the response does not have that shape.
    func erased(_ response: EntitledResponse) -> String? {
        guard let erased = response["erased"], let memberships = erased["memberships"]?.intValue,
            let entries = erased["historyEntries"]?.intValue
        else { return nil }
        return "erased \(Self.count(memberships, "membership")) and \(Self.count(entries, "history entry", plural: "history entries"))"
    }

    /// `1 membership`, `3 memberships`.
    static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
        "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
    }
}
