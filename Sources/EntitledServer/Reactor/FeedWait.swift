import EntitledCore

/// A read of the change feed that waits for a change (`changes` with `wait`), as its connection holds it.
public struct FeedWait: Sendable {
    /// The read's `afterSeq`: its answer is read from there.
    let after: UInt64
    let limit: Int
    /// The read's `user` and `device`, if it gave any: only what concerns them.
    let subject: Subject?
    /// The changes looked at so far, which concerned no one the read asked about: the read waits for a
    /// change after this one (never shown: it may not be durable yet).
    var lookedAt: UInt64

    init(after: UInt64, limit: Int, subject: Subject?) {
        self.after = after
        self.limit = limit
        self.subject = subject
        self.lookedAt = after
    }
}
