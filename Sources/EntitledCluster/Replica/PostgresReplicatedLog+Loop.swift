import EntitledCore
import Logging
import NIOPosix
import PostgresNIO

extension PostgresReplicatedLog {
    /// Connects, serves until the connection fails, and connects again with backoff, until shutdown.
    func runLoop(firstConnection: PostgresConnection) async {
        var connection: PostgresConnection? = firstConnection
        var backoff = options.initialBackoff
        while !isStopping {
            if connection == nil {
                do {
                    connection = try await Self.connect(to: location, options: options, logger: logger)
                    state.withLockedValue { $0.reconnects += 1 }
                    logger.notice("reconnected to the database", metadata: ["postgres": "\(location)"])
                } catch {
                    noteDisconnected(reason: "\(error)")
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, options.maximumBackoff)
                    continue
                }
            }
            backoff = options.initialBackoff
            do {
                try await serve(connection!)
            } catch {
                if !isStopping { noteDisconnected(reason: "\(DatabaseFailure(error))") }
            }
            try? await connection?.close()
            connection = nil
        }
    }

    var isStopping: Bool { state.withLockedValue { $0.stopping } }

    /// Marks the node disconnected, and refuses the writes that were waiting for a group.
    func noteDisconnected(reason: String) {
        let (queued, logsLoss) = state.withLockedValue { state -> ([PendingWrite], Bool) in
            defer {
                state.connected = false
                state.lossLogged = true
                state.lastError = reason
                state.queue = []
            }
            return (state.queue, !state.lossLogged)
        }
        if logsLoss {
            logger.error("lost the database; checks go on from memory, writes are refused until it is back", metadata: ["reason": "\(reason)"])
        }
        for write in queued {
            write.complete(JournalError(reason: "the database is unreachable (\(reason)); nothing was changed"))
        }
    }

    /// Listens for other nodes' commits and runs the work loop on one connection, until it fails.
    private func serve(_ connection: PostgresConnection) async throws {
        var tables = ClusterTables(connection: connection, schema: location.schema, logger: logger)
        tables.timeout = options.writeTimeout
        // Not a child task: a notification sequence whose connection was cut does not always end, and a
        // task group would wait for it. It is cancelled, and ends with its connection.
        let channel = tables.channel
        let listener = Task {
            try? await connection.listen(on: channel) { notifications in
                for try await notification in notifications {
                    // Our own commits come back too: those the replica already holds wake nobody.
                    if let sequence = UInt64(notification.payload), sequence <= self.store.sequence { continue }
                    self.wake.signal()
                }
            }
        }
        defer { listener.cancel() }
        do {
            try await work(tables)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// The work of one connection: settle an unresolved group, catch up, then commit groups and follow
    /// the other nodes until the connection fails or the node stops.
    private func work(_ tables: ClusterTables) async throws {
        if let unresolved = state.withLockedValue({ $0.unresolved }) {
            try await resolve(unresolved, tables: tables)
        }
        try await catchUp(tables)
        state.withLockedValue {
            $0.connected = true
            $0.lossLogged = false
            $0.lastError = nil
        }
        while !isStopping {
            let writes = state.withLockedValue { state -> [PendingWrite] in
                let count = min(state.queue.count, options.maximumGroupSize)
                defer { state.queue.removeFirst(count) }
                return Array(state.queue.prefix(count))
            }
            if !writes.isEmpty {
                try await commitGroup(writes, tables: tables)
                continue
            }
            takeImages()
            await wake.wait(upTo: options.pollInterval)
            if state.withLockedValue({ $0.queue.isEmpty }) {
                try await catchUp(tables)
            }
        }
    }

    /// Gives waiting snapshots their image: between groups, the replica holds only committed changes.
    func takeImages() {
        let captures = state.withLockedValue { state in
            defer { state.captures = [] }
            return state.captures
        }
        guard !captures.isEmpty else { return }
        let image = store.image().withoutErasedMemberships()
        for capture in captures { capture.fulfil(image) }
    }

    /// Opens a connection, with the deadline `options.connectTimeout`, and errors that name what to fix.
    static func connect(to location: PostgresLocation, options: ClusterOptions, logger: Logger) async throws(ClusterError) -> PostgresConnection {
        let configuration = try location.connectionConfiguration(connectTimeout: options.connectTimeout)
        do {
            return try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 1, logger: logger
            )
        } catch {
            let failure = DatabaseFailure(error)
            if failure.isAuthentication {
                throw .connection("the database at \(location) refused the user \(location.user): wrong password, or no such role (\(failure))")
            }
            if failure.isMissingDatabase {
                throw .connection("the database server at \(location) has no database \(location.database): create it (createdb \(location.database)) or name another in --postgres")
            }
            throw .connection("cannot connect to the database at \(location): \(failure)")
        }
    }
}
