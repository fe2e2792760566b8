import EntitledStorage
import EntitledWire
import Testing

@testable import EntitledServer

/// `stats` spells the log's fsync policy and outage kind as the storage does: the wire keeps enums of its
/// own (it does not know EntitledStorage), and these hold their raw values to the storage's, so that
/// `persistence.fsync` repeats the word the operator gave `--fsync`, and `unwritable.kind` the log's.
@Suite struct StatisticsSpellingTests {
    @Test func statsSaysTheFsyncPolicyAsTheSettingSpellsIt() {
        for policy in EntitledStorage.FsyncPolicy.allCases {
            #expect(ServerStatistics.Persistence.FsyncPolicy(policy).rawValue == policy.rawValue)
        }
        #expect(ServerStatistics.Persistence.FsyncPolicy.allCases.count == EntitledStorage.FsyncPolicy.allCases.count)
    }

    @Test func statsSaysTheOutageKindAsTheLogSpellsIt() {
        for kind in [LogOutage.Kind.diskFull, .diskFailed] {
            let spelt = ServerStatistics.Persistence.Unwritable.Kind(kind)
            #expect(spelt.rawValue == kind.rawValue)
            #expect((spelt == .diskFull) == (kind == .diskFull), "resumesByItself follows the kind")
        }
        #expect(ServerStatistics.Persistence.Unwritable.Kind.allCases.map(\.rawValue) == ["disk_full", "disk_failed"])
    }
}
