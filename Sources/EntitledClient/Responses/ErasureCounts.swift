/// What an `erase` removed: the `erased` object of its answer and of its audit entry, which names no one.
public struct ErasureCounts: Sendable, Hashable {
    /// How many memberships went.
    public var memberships: Int
    /// How many audit entries went with them.
    public var historyEntries: Int

    public init(memberships: Int, historyEntries: Int) {
        self.memberships = memberships
        self.historyEntries = historyEntries
    }

    /// Reads an `erased` object; `nil` when a count is missing or not a whole number.
    public init?(json: JSONValue) {
        guard let memberships = json["memberships"]?.intValue, let historyEntries = json["historyEntries"]?.intValue else {
            return nil
        }
        self.init(memberships: memberships, historyEntries: historyEntries)
    }
}
