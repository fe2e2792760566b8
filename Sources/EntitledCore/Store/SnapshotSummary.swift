/// A snapshot just written, as a `snapshot` answer reports it: from a data directory's snapshot file or a
/// cluster's database alike.
public struct SnapshotSummary: Sendable, Hashable {
    /// Where it is kept, for people: a file's path, or such as `postgres:entitled.snapshots/1234`.
    public var location: String
    /// The last change it holds.
    public var sequence: UInt64
    public var bytes: Int
    public var memberships: Int
    /// How long writing it took.
    public var milliseconds: Int64

    public init(location: String, sequence: UInt64, bytes: Int, memberships: Int, milliseconds: Int64) {
        self.location = location
        self.sequence = sequence
        self.bytes = bytes
        self.memberships = memberships
        self.milliseconds = milliseconds
    }
}
