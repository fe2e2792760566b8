/// Why a write was not acknowledged, and what its writer can know of its change.
///
/// It carries what went wrong (`cause`), from which follow what the writer may conclude (`outcome`) and
/// the sentence the writer is told (`reason`): a failure cannot say "not made" of a commit whose answer
/// never came, nor be told in words that another writer of the same failure does not get.
public struct WriteFailure: Error, Sendable, Hashable {
    /// What the writer may conclude about the change.
    public enum Outcome: Sendable, Hashable {
        /// Certainly not made, anywhere: retrying cannot make a duplicate.
        case notMade
        /// It may have been made: the writer retries with the same idempotency key (or looks) to find out.
        case unknown
    }

    /// What went wrong.
    public var cause: Cause
    /// For a commit through several changes that failed part way: the newest change that was made
    /// durable before the failure (and stays). The writes through it were made, and are answered so; only
    /// those after it failed. `nil` when no part of the commit is known to have been kept.
    public var madeThrough: UInt64?

    public init(_ cause: Cause) {
        self.cause = cause
    }

    /// The store refused the write.
    public static func refused(_ error: StoreError) -> WriteFailure {
        WriteFailure(.refused(error))
    }

    /// What the writer may conclude about the change, which follows from the cause.
    public var outcome: Outcome { cause.outcome }

    /// What went wrong, for the writer and the operator: a clause the server's answer puts into its own
    /// sentence (`the write was not made: …`).
    public var reason: String { cause.reason }

    /// The store refused the write (it changed nothing): answered with the refusal's own code.
    public var refusal: StoreError? {
        if case .refused(let error) = cause { return error }
        return nil
    }
}
