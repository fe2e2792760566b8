import EntitledCore
import NIOConcurrencyHelpers

/// A write queued for a group: what it asks for, whom to tell, and until when.
final class PendingWrite: Sendable {
    let write: StoreWrite
    let deadline: ContinuousClock.Instant
    private let completion: NIOLockedValueBox<(@Sendable (Result<AppliedWrite, WriteFailure>) -> Void)?>

    init(write: StoreWrite, deadline: ContinuousClock.Instant, completion: @escaping @Sendable (Result<AppliedWrite, WriteFailure>) -> Void) {
        self.write = write
        self.deadline = deadline
        self.completion = NIOLockedValueBox(completion)
    }

    /// Tells the writer, once: later calls (the deadline passed first, then the outcome) do nothing.
    func complete(_ result: Result<AppliedWrite, WriteFailure>) {
        let completion = self.completion.withLockedValue { completion in
            defer { completion = nil }
            return completion
        }
        completion?(result)
    }

    var isAnswered: Bool { completion.withLockedValue { $0 == nil } }
}

/// A group of writes decided against one committed state: the writes that make a change, in order, with
/// their decisions, and the change numbers they take.
struct DecidedGroup: Sendable {
    var members: [(write: PendingWrite, decision: WriteDecision)]
    /// Given by the database when it commits the group (0 until then).
    var first: UInt64
    var last: UInt64 { first + UInt64(members.count) - 1 }
    /// The group id its change rows carry.
    var id: Int64
}

/// A group whose COMMIT was sent but not answered: it may have committed. Its writers wait (until their
/// deadline, when they are told the outcome is unknown) for the node to learn its fate for certain.
struct UnresolvedGroup: Sendable {
    var decided: DecidedGroup
    /// The server process that ran the call.
    var backend: DatabaseBackend
    /// Why the COMMIT went unanswered.
    var reason: String
}

/// The store's journal in cluster mode: refuses every change, so that no change can reach a replica
/// except through a committed group (`EntitlementStore.carryOut`) or the change table (`replay`), neither
/// of which records.
final class RefusingJournal: ChangeJournal {
    func record(_ change: StoreChange, context: ChangeContext, sequence: UInt64) throws(JournalError) {
        throw .outsideTheDatabase
    }
}
