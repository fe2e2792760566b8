import EntitledCore
import NIOCore

extension ResponseEncoder {
    /// The fields of a `stats` answer (see PROTOCOL.md, `stats`).
    static func write(_ statistics: ServerStatistics, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(",\"server\":")
        buffer.writeJSONString(statistics.server)
        buffer.writeStaticString(",\"startedAt\":")
        buffer.writeJSONTimestamp(statistics.startedAt)
        buffer.writeStaticString(",\"uptimeSeconds\":")
        buffer.writeString(String(statistics.uptimeSeconds))

        let connections = statistics.connections
        buffer.writeString(
            ",\"connections\":{\"open\":\(connections.open),\"accepted\":\(connections.accepted),\"refused\":\(connections.refused),\"closedIdle\":\(connections.closedIdle)}"
        )

        let total = statistics.requests.reduce(statistics.invalidRequests) { $0 + $1.count }
        buffer.writeString(",\"requests\":{\"total\":\(total),\"invalid\":\(statistics.invalidRequests),\"byOp\":")
        writeCounts(statistics.requests.map { ($0.operation, $0.count) }, into: &buffer)
        buffer.writeStaticString("}")

        let errors = statistics.errors.reduce(0) { $0 + $1.count }
        buffer.writeString(",\"errors\":{\"total\":\(errors),\"byCode\":")
        writeCounts(statistics.errors.map { ($0.code, $0.count) }, into: &buffer)
        buffer.writeStaticString("}")

        buffer.writeStaticString(",\"latencyMicros\":{")
        for (index, entry) in statistics.latency.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeJSONString(entry.operation)
            let summary = entry.summary
            buffer.writeString(
                ":{\"count\":\(summary.count),\"p50\":\(micros(summary.p50)),\"p90\":\(micros(summary.p90)),\"p99\":\(micros(summary.p99)),\"p999\":\(micros(summary.p999)),\"max\":\(micros(summary.max))}"
            )
        }
        buffer.writeStaticString("}")

        let store = statistics.store
        buffer.writeString(
            ",\"store\":{\"users\":\(store.users),\"devices\":\(store.devices),\"memberships\":\(store.memberships),\"entitlements\":\(store.entitlements)}"
        )

        if let replication = statistics.replication {
            // A node of a cluster keeps no data directory: where its replica stands takes the place of `persistence`.
            write(replication, into: &buffer)
            return
        }
        guard let persistence = statistics.persistence else {
            buffer.writeStaticString(",\"persistence\":null")
            return
        }
        buffer.writeStaticString(",\"persistence\":{\"fsync\":")
        buffer.writeJSONString(persistence.fsync.rawValue)
        buffer.writeString(
            ",\"lastChange\":\(persistence.lastChange),\"changesSinceSnapshot\":\(persistence.changesSinceSnapshot),\"logBytesSinceSnapshot\":\(persistence.logBytesSinceSnapshot),\"logBytesWritten\":\(persistence.logBytesWritten),\"logSyncs\":\(persistence.logSyncs),\"logOutages\":\(persistence.logOutages),\"writable\":\(persistence.writable)"
        )
        if let unwritable = persistence.unwritable {
            buffer.writeStaticString(",\"unwritable\":{\"kind\":")
            buffer.writeJSONString(unwritable.kind.rawValue)
            buffer.writeStaticString(",\"reason\":")
            buffer.writeJSONString(unwritable.reason)
            buffer.writeStaticString(",\"since\":")
            buffer.writeJSONTimestamp(unwritable.since)
            buffer.writeString(",\"resumesByItself\":\(unwritable.resumesByItself),\"retries\":\(unwritable.retries)}")
        }
        if let group = persistence.groupCommit {
            buffer.writeString(
                ",\"groupCommit\":{\"groups\":\(group.groups),\"changes\":\(group.changes),\"meanSize\":\(Self.micros(group.meanSize)),\"largest\":\(group.largest),\"meanSyncMicros\":\(Self.micros(group.meanSyncMicros)),\"maxSyncMicros\":\(Self.micros(group.maxSyncMicros)),\"meanWaitMicros\":\(Self.micros(group.meanWaitMicros)),\"maxWaitMicros\":\(Self.micros(group.maxWaitMicros)),\"handedOff\":\(group.handedOff)}"
            )
        }
        buffer.writeString(",\"snapshotsWritten\":\(persistence.snapshotsWritten),\"snapshot\":")
        guard let file = persistence.snapshotFile else {
            buffer.writeStaticString("null}")
            return
        }
        buffer.writeStaticString("{\"file\":")
        buffer.writeJSONString(file)
        buffer.writeString(",\"change\":\(persistence.snapshotChange),\"bytes\":")
        buffer.writeString(persistence.snapshotBytes.map(String.init) ?? "null")
        buffer.writeStaticString(",\"writtenAt\":")
        buffer.writeJSONTimestamp(persistence.snapshotWrittenAt)
        buffer.writeStaticString(",\"durationMs\":")
        buffer.writeString(persistence.snapshotMilliseconds.map(String.init) ?? "null")
        buffer.writeStaticString("}}")
    }

    /// `,"replication":{...}`: the fields of `ReplicationStatus`, and `lagChanges`.
    private static func write(_ replication: ReplicationStatus, into buffer: inout ByteBuffer) {
        buffer.writeStaticString(",\"replication\":{\"source\":")
        buffer.writeJSONString(replication.source)
        buffer.writeStaticString(",\"node\":")
        buffer.writeJSONString(replication.node)
        buffer.writeString(
            ",\"connected\":\(replication.connected),\"writable\":\(replication.writable),\"appliedSequence\":\(replication.appliedSequence),\"knownSequence\":\(replication.knownSequence),\"lagChanges\":\(replication.lagChanges),\"secondsSinceContact\":"
        )
        if let seconds = replication.secondsSinceContact, seconds.isFinite {
            buffer.writeString(String((seconds * 1000).rounded() / 1000))
        } else {
            buffer.writeStaticString("null")
        }
        buffer.writeString(
            ",\"snapshotSequence\":\(replication.snapshotSequence),\"groupsCommitted\":\(replication.groupsCommitted),\"writesCommitted\":\(replication.writesCommitted),\"groupsFailed\":\(replication.groupsFailed),\"groupsRedecided\":\(replication.groupsRedecided),\"reconnects\":\(replication.reconnects),\"changesReplicated\":\(replication.changesReplicated),\"listening\":\(replication.listening),\"catchUps\":\(replication.catchUps),\"lastError\":"
        )
        writeOptional(replication.lastError, into: &buffer)
        buffer.writeStaticString(",\"database\":")
        writeOptional(replication.database, into: &buffer)
        buffer.writeString(
            ",\"divergences\":\(replication.divergences),\"historyMarks\":\(replication.historyMarks),\"reloads\":\(replication.reloads),\"withholdingReads\":\(replication.withholdingReads),\"lastDivergence\":"
        )
        writeOptional(replication.lastDivergence, into: &buffer)
        buffer.writeStaticString(",\"clockOffsetSeconds\":")
        writeSeconds(replication.clockOffsetSeconds, into: &buffer)
        buffer.writeStaticString(",\"clockUncertaintySeconds\":")
        writeSeconds(replication.clockUncertaintySeconds, into: &buffer)
        buffer.writeStaticString("}")
    }

    /// A JSON string, or `null`.
    private static func writeOptional(_ text: String?, into buffer: inout ByteBuffer) {
        if let text {
            buffer.writeJSONString(text)
        } else {
            buffer.writeStaticString("null")
        }
    }

    /// Seconds to the microsecond, or `null`.
    private static func writeSeconds(_ seconds: Double?, into buffer: inout ByteBuffer) {
        if let seconds, seconds.isFinite {
            buffer.writeString(String((seconds * 1_000_000).rounded() / 1_000_000))
        } else {
            buffer.writeStaticString("null")
        }
    }

    /// `{"name":count,...}` in the order given.
    private static func writeCounts(_ counts: [(name: String, count: UInt64)], into buffer: inout ByteBuffer) {
        buffer.writeStaticString("{")
        for (index, entry) in counts.enumerated() {
            if index > 0 { buffer.writeStaticString(",") }
            buffer.writeJSONString(entry.name)
            buffer.writeString(":\(entry.count)")
        }
        buffer.writeStaticString("}")
    }

    /// Microseconds with one decimal: the buckets are not finer than that below 10 µs.
    private static func micros(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int64(tenths / 10)) : String(tenths / 10)
    }
}
