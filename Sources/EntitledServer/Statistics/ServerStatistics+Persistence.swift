import EntitledStorage
import EntitledWire

extension ServerStatistics.Persistence {
    /// What `stats` says of the data directory's log and snapshots.
    init(_ status: PersistenceStatus) {
        self.init(
            fsync: FsyncPolicy(status.fsync), lastChange: status.lastChange, changesSinceSnapshot: status.changesSinceSnapshot,
            logBytesSinceSnapshot: status.logBytesSinceSnapshot, logBytesWritten: status.logBytesWritten, logSyncs: status.logSyncs,
            snapshotFile: status.snapshotFile, snapshotChange: status.snapshotChange, snapshotBytes: status.snapshotBytes,
            snapshotWrittenAt: status.snapshotWrittenAt, snapshotMilliseconds: status.snapshotMilliseconds,
            snapshotsWritten: status.snapshotsWritten,
            unwritable: status.outage.map(Unwritable.init), logOutages: status.logOutages,
            groupCommit: GroupCommit(
                groups: status.groupCommit.groups, changes: status.groupCommit.changes, meanSize: status.groupCommit.meanGroupSize,
                largest: status.groupCommit.largestGroup,
                meanSyncMicros: status.groupCommit.meanSyncMicroseconds(syncs: status.logSyncs),
                maxSyncMicros: Double(status.groupCommit.longestSyncNanoseconds) / 1_000,
                meanWaitMicros: status.groupCommit.meanOldestWaitMicroseconds,
                maxWaitMicros: Double(status.groupCommit.longestWaitNanoseconds) / 1_000, handedOff: status.groupCommit.handedOff
            )
        )
    }
}

extension ServerStatistics.Persistence.FsyncPolicy {
    /// The server's `--fsync` as `stats` spells it. The two enums are kept apart because the wire does not
    /// know EntitledStorage; this switch makes a new policy a compile error until `stats` can say it.
    init(_ policy: EntitledStorage.FsyncPolicy) {
        switch policy {
        case .always: self = .always
        case .everysec: self = .everysec
        case .no: self = .no
        }
    }
}

extension ServerStatistics.Persistence.Unwritable {
    /// Why the log takes no writes, as `stats` says it.
    init(_ outage: LogOutage) {
        self.init(kind: Kind(outage.kind), reason: outage.reason, since: outage.since, retries: outage.retries)
    }
}

extension ServerStatistics.Persistence.Unwritable.Kind {
    /// The log's outage as `stats` spells it (a new kind is a compile error here until it can).
    init(_ kind: LogOutage.Kind) {
        switch kind {
        case .diskFull: self = .diskFull
        case .diskFailed: self = .diskFailed
        }
    }
}
