import Dispatch

extension ServingLoop {
    /// Waits until each of `loops` has committed the writes of the turn it is in (or has stopped), at most
    /// `timeout`; returns whether all did.
    ///
    /// Why: after the log failed, the store is put back to the log's last change, and once the disk takes
    /// writes again the next change gets the number of one that failed. A loop still in the turn that
    /// numbered such a write must have asked the log about it (and heard it failed) before then, or the
    /// new change's acknowledgement would be taken for the old one's. A write is committed at the end of
    /// the turn that read it, or, while the loop's previous commit is out with the log's writer thread, at
    /// the end of the turn in which that commit's outcome arrives. The log reports that outcome (failed)
    /// before it runs this barrier, and a loop runs posted tasks in the order they came, so the outcome's
    /// task runs before this one: one finished turn per loop after this is posted is still enough. Used as
    /// the log's resume barrier.
    static func waitForCommittedTurns(of loops: [ServingLoop], timeout: DispatchTimeInterval = .seconds(5)) -> Bool {
        let group = DispatchGroup()
        for loop in loops {
            group.enter()
            let posted = loop.execute {
                // Posted tasks run before the turn's commit; this one waits for it.
                loop.afterCurrentTurn { group.leave() }
            }
            if !posted { group.leave() }  // a stopped loop commits nothing more
        }
        return group.wait(timeout: .now() + timeout) == .success
    }
}
