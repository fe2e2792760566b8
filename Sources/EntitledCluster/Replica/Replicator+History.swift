import EntitledCore
import Logging

/// A database whose history is not the one the replica applied, and the database's clock.
///
/// When PostgreSQL fails over to a standby that had not received the newest commits, its history is cut
/// short: the replica may hold changes the database no longer has, and the numbers of those changes were
/// given to clients. The node notices it (a new timeline or system identifier at connection, a newest
/// change below the replica's, a change that does not continue the replica's newest), stops serving reads
/// from the replica, makes the database resume its numbering beyond every number given (a mark), and loads
/// the replica again from what the database holds (Protocol/CLUSTER.md, "After a failover").
extension Replicator {
    /// How often a connected node reads the database's clock again (three readings, the best kept).
    static let clockReadingInterval: Duration = .seconds(10)
    /// Past this offset from the database's clock (seconds), the node warns: it goes on in the database's
    /// time, but its machine's clock is wrong, and whatever else runs there is too.
    static let clockWarningBound = 1.0

    /// On every connection, before anything else: notes the database's identity and has `mark_history`
    /// start a new range of numbers when it changed since the history was last written (a failover) or the
    /// database holds less than this node has seen.
    func noteDatabase() async throws {
        guard let tables else { return }
        let marking = try await tables.markHistory(
            node: options.nodeName, group: Int64.random(in: 1...Int64.max), beyond: max(store.sequence, state.withLockedValue { $0.knownSequence })
        )
        state.withLockedValue { $0.database = marking.database }
        noteContact(head: marking.head)
        Self.log(marking, logger: logger)
    }

    /// Says what `mark_history` did, when it did something worth an operator's attention.
    static func log(_ marking: HistoryMarking, logger: Logger) {
        guard marking.outcome == .marked else { return }
        var why = "the database's newest change (\(marking.previous)) is below what this node has seen"
        if let known = marking.known, let found = marking.database, known != found {
            why = "the database changed from \(known) to \(found) (a failover, or a restore)"
        }
        logger.warning(
            "the database's history changed: change numbers resume at \(marking.head + 1), so that none names two changes",
            metadata: ["why": "\(why)", "previousChange": "\(marking.previous)", "mark": "\(marking.head)"]
        )
    }

    /// The replica holds changes the database does not (`evidence` says how that was seen): reads are
    /// withheld, the database resumes its numbering beyond every number this node has seen, and the
    /// replica is loaded again. Reads stay withheld until a reload succeeds (a failure here is retried on
    /// the next connection, which finds the same evidence).
    func recoverFromDivergence(_ evidence: String) async throws {
        guard let tables else { return }
        let applied = store.sequence
        let observer = state.withLockedValue { state -> (any ReplicaObserver)? in
            state.divergences += 1
            state.lastDivergence = evidence
            state.withholdingReads = true
            return state.observer
        }
        observer?.replicaWithholdsReads(
            "this node is reloading its replica: the database's history is not the one it applied (\(evidence)); retry in a moment"
        )
        logger.critical(
            "this replica holds changes the database does not have (lost by a failover of the database?); reads are withheld while it is loaded again from the database",
            metadata: ["applied": "\(applied)", "evidence": "\(evidence)"]
        )
        let marking = try await tables.markHistory(
            node: options.nodeName, group: Int64.random(in: 1...Int64.max), beyond: max(applied, state.withLockedValue { $0.knownSequence })
        )
        Self.log(marking, logger: logger)
        try await reloadReplica(tables: tables)
        logger.notice("the replica was loaded again from the database; reads are served", metadata: ["sequence": "\(store.sequence)"])
    }

    /// Reads the database's clock and adopts the best of three readings; warns while the offset is past
    /// `clockWarningBound`.
    func readClock() async throws {
        guard let tables else { return }
        let reading = try await tables.bestClockReading()
        clock.adopt(reading)
        lastClockReading = .now
        let offset = Double(reading.offsetMicroseconds) / 1e6
        let metadata: Logger.Metadata = [
            "databaseAheadSeconds": "\(offset)", "uncertaintySeconds": "\(Double(reading.uncertaintyMicroseconds) / 1e6)",
        ]
        if abs(offset) > Self.clockWarningBound {
            if !clockWarned {
                logger.warning(
                    "this machine's clock is \(abs(offset)) s \(offset < 0 ? "ahead of" : "behind") the database's; the node records and answers in the database's time, but fix this machine's time service",
                    metadata: metadata
                )
            }
            clockWarned = true
        } else if clockWarned {
            logger.notice("this machine's clock agrees with the database's again", metadata: metadata)
            clockWarned = false
        }
    }
}
