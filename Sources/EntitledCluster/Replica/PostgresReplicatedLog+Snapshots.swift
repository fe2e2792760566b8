import Dispatch
import EntitledCore
import EntitledStorage
import NIOConcurrencyHelpers
import PostgresNIO

extension PostgresReplicatedLog {
    public func snapshot() throws(JournalError) -> SnapshotSummary {
        switch runBlocking({ try await self.writeSnapshot(unlessNewerThan: nil) }) {
        case .success(let snapshot?): return snapshot
        case .success(nil): throw .snapshotInProgress
        case .failure(let error): throw .snapshotFailed(cause: "\(error)")
        }
    }

    /// Writes a snapshot unless one no older than `interval` exists, or nothing changed since the newest
    /// one, or another node is writing one: for the periodic snapshots, which every node runs. Returns
    /// the snapshot written, if any.
    public func snapshotIfDue(interval: Duration) async throws(ClusterError) -> SnapshotSummary? {
        do {
            return try await writeSnapshot(unlessNewerThan: interval)
        } catch let error as ClusterError {
            throw error
        } catch {
            throw .database("\(DatabaseFailure(error))")
        }
    }

    /// Takes an image of the replica between two groups, encodes it and stores it on a connection of its
    /// own (the loop's goes on committing meanwhile); removes what it covers. `nil` when skipped.
    private func writeSnapshot(unlessNewerThan interval: Duration?) async throws -> SnapshotSummary? {
        let started = ContinuousClock.now
        let capture = ImageCapture()
        let accepted = state.withLockedValue { state -> Bool in
            guard state.connected, !state.stopping else { return false }
            state.captures.append(capture)
            return true
        }
        guard accepted else { throw ClusterError.connection("the database is unreachable (\(state.withLockedValue { $0.lastError } ?? "stopping"))") }
        signal()
        // Waited for off the loop's task: the capture is fulfilled by the loop, between groups.
        let (image, anchor) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(image: StoreImage, anchor: Int64), any Error>) in
            DispatchQueue.global().async {
                if let captured = capture.wait(timeout: self.options.writeTimeout + .seconds(5)) {
                    continuation.resume(returning: captured)
                } else {
                    continuation.resume(throwing: ClusterError.database("the replica did not reach a point between two groups of writes in time"))
                }
            }
        }
        let connection = try await Self.connect(to: location, options: options, logger: logger)
        defer { Task { try? await connection.close() } }
        let tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        try await tables.begin()
        guard try await tables.trySnapshotLock() else {
            try await tables.rollback()
            return nil
        }
        let newest = try await tables.newestSnapshotSequence()
        if let interval {
            let recent = try await tables.hasSnapshot(youngerThan: Self.seconds(interval))
            if recent || newest >= image.sequence {
                try await tables.rollback()
                return nil
            }
        } else if newest >= image.sequence {
            // Nothing since the newest snapshot: it is the answer.
            try await tables.rollback()
            return SnapshotSummary(location: "postgres:\(location.schema).snapshots/\(newest)", sequence: newest, bytes: 0, memberships: image.memberships.count, milliseconds: 0)
        }
        // Only a snapshot of the database's own history: a replica still holding changes a failover lost
        // (not yet noticed) must not write them back as the state after a number the database gave to
        // something else, or for a number it has not reached.
        let head = try await tables.head()
        guard image.sequence <= head.sequence, try await tables.group(ofChange: image.sequence) == anchor else {
            try await tables.rollback()
            throw ClusterError.diverged(
                "the snapshot was not written: the replica's change \(image.sequence) is not the database's (its newest change is \(head.sequence)); the node reloads from the database when it next reads from it"
            )
        }
        let bytes = PortableRecords.encodeSnapshot(image)
        let removed = try await tables.storeSnapshot(
            sequence: image.sequence, group: anchor, node: options.nodeName, memberships: image.memberships.count, bytes: bytes,
            retention: options.retentionSeconds
        )
        try await tables.commit()
        state.withLockedValue { $0.snapshotSequence = max($0.snapshotSequence, image.sequence) }
        let milliseconds = Int(Self.seconds(ContinuousClock.now - started) * 1000)
        logger.info(
            "wrote a snapshot into the database",
            metadata: [
                "change": "\(image.sequence)", "bytes": "\(bytes.count)", "memberships": "\(image.memberships.count)",
                "removedChanges": "\(removed)", "ms": "\(milliseconds)",
            ]
        )
        return SnapshotSummary(
            location: "postgres:\(location.schema).snapshots/\(image.sequence)", sequence: image.sequence, bytes: bytes.count,
            memberships: image.memberships.count, milliseconds: Int64(milliseconds)
        )
    }

    /// Runs `work` on the concurrency pool and waits for it on this thread (which is not one of the pool's:
    /// the server calls `snapshot()` from a dispatch queue).
    private func runBlocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let result = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await work()
                result.withLockedValue { $0 = .success(value) }
            } catch {
                result.withLockedValue { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return result.withLockedValue { $0 }!
    }
}
