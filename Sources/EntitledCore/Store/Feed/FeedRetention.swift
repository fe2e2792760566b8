/// How far back the change feed reaches: a change stays at least `age` (by the time it was recorded) and
/// at most `changes` membership changes are kept, whichever lets go first; the feed then lets go of its
/// oldest chunk (`ChangeFeed.chunkSize` changes) at a time. Documented in Protocol/PROTOCOL.md, "The change
/// feed", and set with `--feed-retention` and `--feed-retention-changes`.
///
/// The feed's index costs 16 bytes a membership change (what each change did is the audit trail, which
/// the store keeps anyway): the defaults hold it under 64 MiB.
public struct FeedRetention: Hashable, Sendable {
    /// How long a change stays in the feed, in milliseconds; `nil` for no limit of time.
    public var ageMilliseconds: Int64?
    /// The most membership changes the feed keeps.
    public var changes: Int

    /// Thirty days, as long as Stripe lets an account list its events; and four million changes.
    public static let standard = FeedRetention(ageMilliseconds: 30 * 86_400_000, changes: 4_000_000)

    /// The fewest changes a retention keeps: one chunk.
    public static let minimumChanges = ChangeFeed.chunkSize

    /// - Parameter changes: raised to `minimumChanges` when lower.
    public init(ageMilliseconds: Int64?, changes: Int) {
        self.ageMilliseconds = ageMilliseconds.map { max($0, 0) }
        self.changes = max(changes, Self.minimumChanges)
    }

    /// The retention as a person reads it: `30 days and 4000000 changes`.
    public var description: String {
        let age: String
        switch ageMilliseconds {
        case nil: age = "no limit of time"
        case let milliseconds? where milliseconds % 86_400_000 == 0: age = "\(milliseconds / 86_400_000) days"
        case let milliseconds? where milliseconds % 3_600_000 == 0: age = "\(milliseconds / 3_600_000) hours"
        case let milliseconds?: age = "\(milliseconds / 1000) seconds"
        }
        return "\(age) and \(changes) changes"
    }
}
