import EntitledCore
import NIOConcurrencyHelpers

/// A write queued for a group: how to decide it, whom to tell, and until when.
final class PendingWrite: Sendable {
    let decide: @Sendable () -> Void
    let deadline: ContinuousClock.Instant
    private let completion: NIOLockedValueBox<(@Sendable (JournalError?) -> Void)?>

    init(decide: @escaping @Sendable () -> Void, completion: @escaping @Sendable (JournalError?) -> Void, deadline: ContinuousClock.Instant) {
        self.decide = decide
        self.deadline = deadline
        self.completion = NIOLockedValueBox(completion)
    }

    /// Tells the writer, once: later calls (a deadline that passed first, then the outcome) do nothing.
    func complete(_ failure: JournalError?) {
        let completion = self.completion.withLockedValue { completion in
            defer { completion = nil }
            return completion
        }
        completion?(failure)
    }

    var isAnswered: Bool { completion.withLockedValue { $0 == nil } }
}
