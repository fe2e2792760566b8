/// That an erasure happened, for the audit trail: who asked, when, why, and how much it removed, but not
/// whom it erased (the point of an erasure is that no record names the person any more).
public struct ErasureRecord: Hashable, Sendable {
    public var sequence: UInt64
    /// Who asked and why. A reason is the operator's free text: it should name a ticket, not the person.
    public var context: ChangeContext
    /// How many memberships it erased.
    public var memberships: Int
    /// How many audit entries went with them.
    public var historyEntries: Int

    public init(sequence: UInt64, context: ChangeContext, memberships: Int, historyEntries: Int) {
        self.sequence = sequence
        self.context = context
        self.memberships = memberships
        self.historyEntries = historyEntries
    }
}
