import PostgresNIO

/// Where the numbering of changes resumes after a failover (`mark_history`, `ClusterTables+History.swift`).
extension ClusterTables {
    /// Notes the database's identity and, when it changed since the history was last written or the
    /// database's newest change is below `beyond`, starts a new range of numbers with a mark of group
    /// `group`. Called outside any transaction (the procedure commits).
    func markHistory(node: String, group: Int64, beyond: UInt64) async throws -> HistoryMarking {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(node)
        bindings.append(group)
        bindings.append(Int64(clamping: beyond))
        bindings.append(channel)
        let result = try await query(
            PostgresQuery(unsafeSQL: "CALL \(schema).mark_history($1, $2, $3, $4)", binds: bindings), "the database's identity"
        )
        for row in result.rows {
            let (outcome, newest, previous, found, known) = try row.decode((String, Int64, Int64, String?, String?).self)
            let kind: HistoryMarking.Outcome
            switch outcome {
            case "marked": kind = .marked
            case "recorded": kind = .recorded
            case "unchanged": kind = .unchanged
            default: throw ClusterError.corrupt("\(schema).mark_history answered \(outcome): the schema was changed by hand")
            }
            return HistoryMarking(
                outcome: kind, head: UInt64(newest), previous: UInt64(previous), database: found.map(DatabaseIdentity.init),
                known: known.flatMap { $0.isEmpty ? nil : DatabaseIdentity($0) }
            )
        }
        throw ClusterError.corrupt("\(schema).mark_history answered nothing: the schema was changed by hand")
    }
}

/// What `mark_history` did.
struct HistoryMarking: Sendable {
    enum Outcome: Sendable {
        /// A mark was written: the numbering resumes after `head`.
        case marked
        /// The database's identity was noted for the first time.
        case recorded
        case unchanged
    }

    var outcome: Outcome
    /// The newest change now (the mark, when one was written).
    var head: UInt64
    /// The newest change before the call.
    var previous: UInt64
    /// The database's identity, when the role may read it.
    var database: DatabaseIdentity?
    /// The identity the history was last written on, before the call.
    var known: DatabaseIdentity?
}

/// Which PostgreSQL database, and which history of it: its system identifier (a new `initdb`, or a
/// restore into a new cluster, has another) and timeline (each promotion of a standby, and each
/// point-in-time recovery, starts a new one). Stored as `SYSTEM/TIMELINE`, the timeline as the 8 hexadecimal
/// digits that start its WAL files' names.
struct DatabaseIdentity: Sendable, Hashable, CustomStringConvertible {
    var text: String

    init(_ text: String) {
        self.text = text
    }

    var description: String {
        let parts = text.split(separator: "/")
        guard parts.count == 2, let timeline = UInt32(parts[1], radix: 16) else { return text }
        return "system \(parts[0]) timeline \(timeline)"
    }
}
