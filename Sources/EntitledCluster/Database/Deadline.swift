import NIOConcurrencyHelpers

/// Runs `operation`, giving up after `limit`: throws `DatabaseFailure` then, and leaves the operation to
/// finish (or not) on its own.
///
/// Measured here: a query sent on a PostgresNIO connection that the server has just terminated can wait
/// forever (neither failing nor answering), and closing the connection does not wake it; a task group
/// would then wait for it too. So the operation runs in a task of its own, and whichever of it and the
/// timer ends first answers; a hung operation costs one suspended task until its connection is freed.
func withDeadline<T: Sendable>(
    _ limit: Duration, what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let answered = NIOLockedValueBox(false)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        func answer(_ result: Result<T, any Error>) {
            let first = answered.withLockedValue { done -> Bool in
                defer { done = true }
                return !done
            }
            if first { continuation.resume(with: result) }
        }
        let work = Task {
            do { answer(.success(try await operation())) } catch { answer(.failure(error)) }
        }
        Task {
            try? await Task.sleep(for: limit)
            answer(.failure(DatabaseFailure(timeout: "the database did not answer \(what) within \(PostgresReplicatedLog.seconds(limit)) s")))
            work.cancel()
        }
    }
}
