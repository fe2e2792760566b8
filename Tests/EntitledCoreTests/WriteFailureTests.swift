import EntitledCore
import Testing

/// Each cause of a failed write says whether the change may have been made, and in the words writers were
/// always told (the server puts them into its `unavailable` and `outcome_unknown` answers).
@Suite struct WriteFailureTests {
    @Test func causesWhoseChangeWasCertainlyNotMadeSaySo() {
        let notMade: [(WriteFailure.Cause, String)] = [
            (.nodeStopping, "the node is stopping"),
            (.databaseUnreachable(lastError: nil), "the database is unreachable (connecting); writes are refused until it is back, checks still answer"),
            (.databaseUnreachable(lastError: "connection refused"), "the database is unreachable (connection refused); writes are refused until it is back, checks still answer"),
            (.databaseLost(cause: "connection reset"), "the database is unreachable (connection reset)"),
            (.notTakenInTime(seconds: 2.5, lastError: nil), "the database did not take the write within 2.5 s (the cluster's write lock is busy)"),
            (.notTakenInTime(seconds: 2.0, lastError: "timeout"), "the database did not take the write within 2.0 s (timeout)"),
            (.notCommitted(cause: "connection reset"), "the change was not committed (connection reset); nothing was changed"),
            (.journal(.failed), "the log failed (it is undone, and not on disk)"),
            (.journal(.outage(cause: "disk full", changeMayRemain: false)), "disk full (it is undone, and not on disk)"),
        ]
        for (cause, sentence) in notMade {
            let failure = WriteFailure(cause)
            #expect(failure.outcome == .notMade, "\(cause)")
            #expect(failure.reason == sentence)
            #expect(failure.refusal == nil)
        }
    }

    @Test func causesWhoseChangeMayHaveBeenMadeSaySo() {
        let unknown: [(WriteFailure.Cause, String)] = [
            (.stoppedBeforeFateKnown, "the node stopped before it learned whether its last group of writes committed"),
            (.commitNotConfirmedInTime(seconds: 2.0, lastError: nil), "the database did not confirm the commit within 2.0 s (no answer)"),
            (.commitNotConfirmedInTime(seconds: 2.0, lastError: "EOF"), "the database did not confirm the commit within 2.0 s (EOF)"),
            (.committedChangesGone(first: 7, last: 9), "its group was committed as changes 7 to 9, which the database no longer shows"),
            (
                .journal(.outage(cause: "disk failed", changeMayRemain: true)),
                "disk failed; the log could not be cut back to the acknowledged changes either, so a restart may bring this change back"
            ),
        ]
        for (cause, sentence) in unknown {
            let failure = WriteFailure(cause)
            #expect(failure.outcome == .unknown, "\(cause)")
            #expect(failure.reason == sentence)
        }
    }

    @Test func aRefusalIsNotMadeAndCarriesTheStoresError() {
        let error = StoreError.unknownEntitlement("pro")
        let failure = WriteFailure.refused(error)
        #expect(failure.outcome == .notMade)
        #expect(failure.refusal == error)
        #expect(failure.reason == error.message)
    }
}
