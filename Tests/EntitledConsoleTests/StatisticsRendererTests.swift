@testable import EntitledClient
import Foundation
import Testing

@testable import EntitledConsole

/// The `stats` text while the server refuses writes.
@Suite struct StatisticsRendererTests {
    static let refusingWrites = #"{"ok":true,"server":"entitled 0.1.0","startedAt":"2026-11-22T10:50:45.993Z","uptimeSeconds":3,"connections":{"open":1,"accepted":1,"refused":0,"closedIdle":0},"requests":{"total":2,"invalid":0,"byOp":{"grant":2}},"errors":{"total":1,"byCode":{"unavailable":1}},"latencyMicros":{},"store":{"users":1,"devices":0,"memberships":1,"entitlements":0},"persistence":{"fsync":"always","lastChange":1,"changesSinceSnapshot":1,"logBytesSinceSnapshot":107,"logBytesWritten":107,"logSyncs":1,"logOutages":1,"writable":false,"unwritable":{"kind":"disk_full","reason":"the data directory's disk is full (ENOSPC: write log-00000000000000000001.wal: No space left on device (errno 28)); writes resume by themselves once it takes writes again","since":"2026-11-22T10:50:47.000Z","resumesByItself":true,"retries":3},"snapshotsWritten":0,"snapshot":null}}"#

    @Test func statsWhileWritesAreRefusedSaysSoWithTheServersReasonAndSinceWhen() throws {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        let text = renderer.render(command: .stats, response: try response(Self.refusingWrites))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("writes") }, "\(text)")
        #expect(line.contains("refused since 2026-11-22T10:50:47.000Z"), "\(line)")
        #expect(line.contains("disk is full (ENOSPC"), "\(line)")
        #expect(line.contains("resume by themselves"), "\(line)")
    }

    @Test func statsOfAWritableServerHasNoWritesLine() throws {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        let writable = Self.refusingWrites
            .replacingOccurrences(of: #""writable":false,"#, with: #""writable":true,"#)
        let withoutOutage = String(writable[..<writable.range(of: #","unwritable""#)!.lowerBound])
            + #","snapshotsWritten":0,"snapshot":null}}"#
        let text = renderer.render(command: .stats, response: try response(withoutOutage))
        #expect(text.contains("store"), "\(text)")
        #expect(!text.contains("writes "), "\(text)")
    }

    static let clusterNode = #"{"ok":true,"server":"entitled 0.1.0","startedAt":"2026-11-22T10:50:45.993Z","uptimeSeconds":3,"connections":{"open":1,"accepted":1,"refused":0,"closedIdle":0},"requests":{"total":2,"invalid":0,"byOp":{"grant":2}},"errors":{"total":1,"byCode":{"unavailable":1}},"latencyMicros":{},"store":{"users":1,"devices":0,"memberships":1,"entitlements":0},"replication":{"source":"postgres://entitled@db:5432/app","node":"node-b","connected":false,"writable":false,"appliedSequence":41,"knownSequence":44,"lagChanges":3,"secondsSinceContact":12.5,"snapshotSequence":30,"groupsCommitted":7,"writesCommitted":9,"groupsFailed":1,"reconnects":2,"changesReplicated":25,"lastError":"connection refused"}}"#

    @Test func statsShowsTheGroupCommitsBatchesSyncsAndWaits() throws {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        let withGroups = Self.refusingWrites.replacingOccurrences(
            of: #""writable":false,"#,
            with: #""writable":false,"groupCommit":{"groups":7631,"changes":290648,"meanSize":38.1,"largest":50,"meanSyncMicros":143.1,"maxSyncMicros":5139.1,"meanWaitMicros":294.1,"maxWaitMicros":6368.4,"handedOff":0},"#
        )
        let text = renderer.render(command: .stats, response: try response(withGroups))
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("commits") }, "\(text)")
        #expect(line.contains("7,631 groups") || line.contains("7631 groups"), "\(line)")
        #expect(line.contains("38.1 changes each on average (largest 50)"), "\(line)")
        #expect(line.contains("sync 143.1 µs on average"), "\(line)")
        #expect(line.contains("294.1 µs on average, 6368.4 µs at most"), "\(line)")
        // A server that wrote nothing yet has no such row.
        #expect(!renderer.render(command: .stats, response: try response(Self.refusingWrites)).contains("commits"))
    }

    @Test func statsOfAClusterNodeShowsItsReplicaInsteadOfTheLog() throws {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        let text = renderer.render(command: .stats, response: try response(Self.clusterNode))
        #expect(text.contains("cluster      node node-b of postgres://entitled@db:5432/app; not connected, last contact 12.5 s ago"), "\(text)")
        #expect(text.contains("replica      applied change 41, 3 behind; 25 changes from other nodes"), "\(text)")
        #expect(text.contains("writes       refused: connection refused"), "\(text)")
        #expect(text.contains("commits      7 groups (9 writes) committed, 1 failed; 2 reconnects"), "\(text)")
        #expect(!text.contains("log "), "\(text)")
        // Nothing of a failover on a node that saw none.
        #expect(!text.contains("history"), "\(text)")
    }

    @Test func statsOfANodeAfterAFailoverSayWhatItLostAndTheDatabasesClock() throws {
        let renderer = ResponseRenderer(style: .plain, now: Instants.afterExamples)
        let diverged = Self.clusterNode.replacingOccurrences(
            of: #""lastError":"connection refused"}"#,
            with: #""lastError":null,"database":"system 7715 timeline 2","divergences":1,"historyMarks":1,"reloads":1,"withholdingReads":false,"lastDivergence":"the database's newest change is 20, this replica applied change 30","clockOffsetSeconds":-0.25,"clockUncertaintySeconds":0.0001}"#
        )
        let text = renderer.render(command: .stats, response: try response(diverged))
        #expect(text.contains("database     system 7715 timeline 2; its clock -0.25 s ahead of this node's"), "\(text)")
        #expect(
            text.contains(
                "history      1 divergences (the database lost changes this node held), the last: the database's newest change is 20, this replica applied change 30"
            ),
            "\(text)"
        )
    }
}
