/// What an export read: the change its copy is as of, and how much it wrote. After a complete export,
/// the change feed continues after `sequence`: nothing is missed between the copy and the feed.
public struct ExportSummary: Sendable, Hashable {
    /// The change the copy is as of (the answer's `export.seq`).
    public var sequence: UInt64
    /// When the server took the copy (`export.time`).
    public var time: String
    /// Pages read, memberships and audit entries written so far.
    public var pages = 0
    public var memberships = 0
    public var historyEntries = 0

    public init(sequence: UInt64, time: String) {
        self.sequence = sequence
        self.time = time
    }
}
