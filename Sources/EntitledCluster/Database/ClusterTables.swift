import EntitledStorage
import Logging
import NIOCore
import PostgresNIO

/// entitled's tables in its schema, over one connection: the SQL of cluster mode, in one place.
/// Protocol/CLUSTER.md specifies the tables; `ClusterTables+Schema.swift` creates and upgrades them.
///
/// - `head`: one row, the number of the newest committed change. A group of writes locks it
///   (`SELECT ... FOR UPDATE`, in `commit_group`) for its transaction: that lock is the cluster's order.
/// - `changes`: each change, by number, as a log record payload (the data directory's format).
/// - `snapshots`: whole images of the store, as snapshot file bytes; the newest is where a node starts.
struct ClusterTables: Sendable {
    let connection: PostgresConnection
    let schema: String
    let logger: Logger
    /// The longest one statement may take; past it the connection is closed and the statement fails, so
    /// that a connection that stopped answering never holds the node.
    var timeout: Duration = .seconds(300)

    /// The channel on which a committed group is announced (`NOTIFY`): a wake-up, never the truth.
    var channel: String { "\(schema)_changes" }

    /// Runs `query` and collects its rows, within `timeout`.
    ///
    /// Through PostgresNIO's future interface, with the deadline a timer on the connection's own event
    /// loop: the replica's work runs on that loop too (`Replicator`), so a statement costs no thread hop
    /// on either side. (An `async` query raced against a `Task` deadline cost two tasks and four thread
    /// hops a statement, about 0.3 ms a round trip on 2 busy cores: most of a group's time, measured with
    /// PostgreSQL's statement log.) Closing the connection at the deadline also ends a statement sent on a
    /// connection the server already terminated, which PostgresNIO would otherwise wait on for ever.
    func query(_ query: PostgresQuery, _ what: @autoclosure () -> String) async throws -> PostgresQueryResult {
        guard !connection.isClosed else { throw DatabaseFailure(timeout: "the connection to the database is closed") }
        let eventLoop = connection.eventLoop
        let promise = eventLoop.makePromise(of: PostgresQueryResult.self)
        connection.query(query, logger: logger).cascade(to: promise)
        let (connection, failure) = (self.connection, DatabaseFailure(timeout: "the database did not answer \(what()) within \(Self.seconds(timeout)) s"))
        let timer = eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(timeout))) {
            promise.fail(failure)
            connection.closeWithoutWaiting()
        }
        defer { timer.cancel() }
        return try await promise.futureResult.value()
    }

    func run(_ sql: String) async throws {
        _ = try await query(PostgresQuery(unsafeSQL: sql), sql)
    }

    func begin() async throws { try await run("BEGIN") }
    func commit() async throws { try await run("COMMIT") }
    func rollback() async throws { try await run("ROLLBACK") }

    /// The newest committed change and its group; with `locking`, inside a transaction, also takes the
    /// cluster's write lock until the transaction ends (waiting while another node's group holds it).
    func head(locking: Bool = false) async throws -> (sequence: UInt64, group: Int64) {
        let result = try await query(
            PostgresQuery(unsafeSQL: "SELECT seq, group_id FROM \(schema).head" + (locking ? " FOR UPDATE" : "")), "head"
        )
        for row in result.rows {
            let (sequence, group) = try row.decode((Int64, Int64).self)
            return (UInt64(sequence), group)
        }
        throw ClusterError.corrupt("\(schema).head holds no row: the schema was changed by hand")
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}

/// A committed change as the change table holds it, or a mark where the numbering resumes.
struct ChangeRow: Sendable {
    var sequence: UInt64
    var format: UInt32
    /// The group (transaction) that committed it: a node that lost a COMMIT's answer recognises its own.
    var group: Int64
    /// The group of the change before it: what it continues (`ClusterTables+History.swift`).
    var previousGroup: Int64
    var record: [UInt8]

    /// Whether it is a mark: no change, the numbering resumes here after `markedPrevious`.
    var isMark: Bool { format == ClusterTables.markFormat }

    /// The number this row follows: the one before it, or for a mark the change it resumes after (`nil`
    /// for a mark whose record is not 8 bytes or more).
    var follows: UInt64? {
        guard isMark else { return sequence - 1 }
        guard record.count >= 8 else { return nil }
        return record.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting for it to be closed (in an `async` context, `close()` means
    /// the overload that waits).
    func closeWithoutWaiting() {
        let closed: EventLoopFuture<Void> = close()
        closed.whenComplete { _ in }
    }
}

extension EventLoopFuture where Value: Sendable {
    /// The future's value, waited for on the caller's executor. NIO's `get()` is an `async` function of a
    /// module built without `NonisolatedNonsendingByDefault`: it runs on the global executor, and its
    /// result came back to the replicator's event loop through two thread wake-ups (seen under strace as
    /// futex calls around every statement).
    func value() async throws -> Value {
        try await withUnsafeThrowingContinuation { continuation in
            whenComplete { continuation.resume(with: $0) }
        }
    }
}
