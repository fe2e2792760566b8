import EntitledCore
import NIOCore
import Testing

@testable import EntitledServer

/// A connection's answers kept in request order, without a socket.
@Suite struct AnswerQueueTests {
    private func queue() -> AnswerQueue { AnswerQueue(ready: ByteBuffer()) }

    private func answer(_ text: String, into queue: inout AnswerQueue) {
        queue.appending { $0.writeString(text) }
    }

    /// A write's answer, waiting for change `sequence` to be committed (0: waiting to be filled in).
    private func waiting(_ queue: inout AnswerQueue, _ text: String?, change sequence: UInt64) -> UInt64 {
        let token = queue.takeToken()
        queue.wait(
            for: WaitingAnswer(
                token: token, answer: text.map { ByteBuffer(string: $0) }, awaitedSequence: sequence, id: nil, trailing: ByteBuffer(),
                notice: nil, operation: .grant, startedAt: 0
            )
        )
        return token
    }

    private func readyText(_ queue: AnswerQueue) -> String { String(buffer: queue.ready) }

    @Test func answersWithNothingWaitingAreReadyAtOnceInOrder() {
        var answers = queue()
        answer("a\n", into: &answers)
        answer("b\n", into: &answers)
        #expect(readyText(answers) == "a\nb\n")
        #expect(!answers.hasWaiting && answers.uncommittedSequence == nil)
    }

    @Test func aWriteWaitingForItsCommitHoldsBackEveryLaterAnswerUntilCommitted() {
        var answers = queue()
        answer("check 1\n", into: &answers)
        _ = waiting(&answers, "grant 1\n", change: 7)
        answer("check 2\n", into: &answers)
        _ = waiting(&answers, "grant 2\n", change: 8)
        answer("check 3\n", into: &answers)
        #expect(readyText(answers) == "check 1\n")
        #expect(answers.uncommittedSequence == 8)

        var settled: [UInt64] = []
        answers.committed(through: 7, succeeded: true, settle: { settled.append($0.token) })
        answers.releaseReady()
        #expect(settled.count == 1)
        #expect(readyText(answers) == "check 1\ngrant 1\ncheck 2\n")
        #expect(answers.uncommittedSequence == 8)

        answers.committed(through: 8, succeeded: true, settle: { settled.append($0.token) })
        answers.releaseReady()
        #expect(settled.count == 2)
        #expect(readyText(answers) == "check 1\ngrant 1\ncheck 2\ngrant 2\ncheck 3\n")
        #expect(!answers.hasWaiting && answers.uncommittedSequence == nil)
    }

    @Test func aFailedCommitSettlesItsAnswersWithoutMovingTheAcknowledgedMark() {
        var answers = queue()
        _ = waiting(&answers, "grant 1\n", change: 3)
        _ = waiting(&answers, "grant 2\n", change: 4)
        answers.committed(through: 3, succeeded: false, settle: { element in
            element.answer = ByteBuffer(string: "failed\n")
        })
        answers.releaseReady()
        #expect(readyText(answers) == "failed\n")
        #expect(answers.acknowledgedSequence == 0)
        // Only the write still waiting keeps a commit due.
        #expect(answers.uncommittedSequence == 4)
        answers.committed(through: 4, succeeded: false, settle: { $0.answer = ByteBuffer(string: "failed too\n") })
        answers.releaseReady()
        #expect(answers.uncommittedSequence == nil)
        #expect(readyText(answers) == "failed\nfailed too\n")
    }

    @Test func anAnswerFilledInLaterGoesOutInItsPlaceAndAnUnknownTokenIsIgnored() {
        var answers = queue()
        let snapshot = waiting(&answers, nil, change: 0)
        answer("ping\n", into: &answers)
        answers.releaseReady()
        #expect(readyText(answers) == "")
        // Filled in and committed are both needed: a snapshot's waits for nothing but its answer.
        #expect(answers.uncommittedSequence == nil)
        #expect(answers.fill(snapshot + 100, with: ByteBuffer(string: "wrong\n")) == nil)
        let filled = answers.fill(snapshot, with: ByteBuffer(string: "snapshot\n"))
        #expect(filled?.token == snapshot)
        answers.releaseReady()
        #expect(readyText(answers) == "snapshot\nping\n")
    }

    @Test func anAnswerJustWrittenCanBeTakenBackToWaitOnItsOwn() {
        var answers = queue()
        _ = waiting(&answers, "grant\n", change: 2)
        let start = answers.appendPosition
        answer("held read\n", into: &answers)
        let taken = answers.takeAppended(since: start)
        #expect(String(buffer: taken) == "held read\n")
        answer("next\n", into: &answers)
        answers.committed(through: 2, succeeded: true, settle: { _ in })
        answers.releaseReady()
        #expect(readyText(answers) == "grant\nnext\n")
    }

    /// A single server's write that waits for change `sequence`, its answer `text`: it joins the open
    /// run, or starts one, as `ServedConnection.submit` does.
    private func runWrite(_ queue: inout AnswerQueue, _ text: String, change sequence: UInt64, notice: Bool = false) {
        let write = { (end: Int) in
            WaitingWrite(
                sequence: sequence, end: end, id: nil,
                notice: notice ? AccessNotice(cause: "grant", memberships: [], sequence: sequence) : nil, operation: .grant, startedAt: 0)
        }
        if queue.canJoinRun {
            let (_, end) = queue.appendingToRun { _, run in run.writeString(text) }
            queue.joinRun(write(end))
        } else {
            let answers = ByteBuffer(string: text)
            queue.startRun(answers: answers, token: queue.takeToken(), first: write(answers.writerIndex))
        }
    }

    /// Settles with `failed` for every write of a run when the commit failed.
    private func settle(_ queue: inout AnswerQueue, through: UInt64, succeeded: Bool, settledWrites: inout [UInt64]) {
        queue.committed(through: through, succeeded: succeeded, settle: { _ in }) { write in
            settledWrites.append(write.sequence)
            return succeeded ? nil : ByteBuffer(string: "failed \(write.sequence)\n")
        }
    }

    @Test func writesReadOneAfterAnotherWaitAsOneRunAndGoTogetherOnceCommitted() {
        var answers = queue()
        runWrite(&answers, "grant 1\n", change: 1)
        runWrite(&answers, "grant 2\n", change: 2)
        runWrite(&answers, "grant 3\n", change: 3)
        #expect(answers.waiting.count == 1 && answers.runWrites.count == 3)
        #expect(answers.uncommittedSequence == 3)
        var settled: [UInt64] = []
        settle(&answers, through: 3, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(settled == [1, 2, 3])
        #expect(readyText(answers) == "grant 1\ngrant 2\ngrant 3\n")
        #expect(!answers.hasWaiting && answers.runWrites.isEmpty && answers.uncommittedSequence == nil)
    }

    @Test func anAnswerBehindARunEndsItAndTheNextWriteStartsAnother() {
        var answers = queue()
        runWrite(&answers, "grant 1\n", change: 1)
        answer("check\n", into: &answers)
        #expect(!answers.canJoinRun)
        runWrite(&answers, "grant 2\n", change: 2)
        #expect(answers.waiting.count == 2)
        var settled: [UInt64] = []
        settle(&answers, through: 1, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(readyText(answers) == "grant 1\ncheck\n")
        settle(&answers, through: 2, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(readyText(answers) == "grant 1\ncheck\ngrant 2\n")
    }

    @Test func aRunTakesNoWriteOnceACommitWasAskedForIt() {
        var answers = queue()
        runWrite(&answers, "grant 1\n", change: 1)
        answers.closeRun()
        runWrite(&answers, "grant 2\n", change: 2)
        #expect(answers.waiting.count == 2)
        // The commit asked for goes through change 1 only: its run goes at once, not after the next commit.
        var settled: [UInt64] = []
        settle(&answers, through: 1, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(readyText(answers) == "grant 1\n")
        #expect(answers.uncommittedSequence == 2)
    }

    @Test func aCommitThroughPartOfARunHoldsItUntilTheRestIsCommitted() {
        var answers = queue()
        for change in UInt64(1)...4 { runWrite(&answers, "grant \(change)\n", change: change) }
        var settled: [UInt64] = []
        settle(&answers, through: 2, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(settled == [1, 2])
        #expect(readyText(answers) == "")
        settle(&answers, through: 4, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(settled == [1, 2, 3, 4])
        #expect(readyText(answers) == "grant 1\ngrant 2\ngrant 3\ngrant 4\n")
    }

    @Test func aFailedCommitThroughPartOfARunRewritesThoseAnswersAndKeepsTheOthers() {
        var answers = queue()
        runWrite(&answers, "grant 1 (long answer)\n", change: 1)
        runWrite(&answers, "grant 2\n", change: 2)
        runWrite(&answers, "grant 3 (longer still answer)\n", change: 3)
        runWrite(&answers, "grant 4\n", change: 4)
        var settled: [UInt64] = []
        settle(&answers, through: 1, succeeded: true, settledWrites: &settled)
        settle(&answers, through: 2, succeeded: false, settledWrites: &settled)
        // A later write of the run still waits: nothing goes yet.
        answers.releaseReady()
        #expect(readyText(answers) == "")
        #expect(answers.uncommittedSequence == 4)
        settle(&answers, through: 3, succeeded: false, settledWrites: &settled)
        settle(&answers, through: 4, succeeded: true, settledWrites: &settled)
        answers.releaseReady()
        #expect(settled == [1, 2, 3, 4])
        #expect(readyText(answers) == "grant 1 (long answer)\nfailed 2\nfailed 3\ngrant 4\n")
        #expect(answers.acknowledgedSequence == 4)
    }

    @Test func aRunReleasedWhileReadyHoldsAnswersIsAppendedAfterThem() {
        var answers = queue()
        answer("earlier\n", into: &answers)
        runWrite(&answers, "grant 1\n", change: 1)
        var settled: [UInt64] = []
        settle(&answers, through: 1, succeeded: true, settledWrites: &settled)
        var recycled: [String] = []
        answers.releaseReady { recycled.append(String(buffer: $0)) }
        #expect(readyText(answers) == "earlier\ngrant 1\n")
        #expect(recycled == ["grant 1\n"])
        // With `ready` empty, the run's buffer takes its place and the empty one is recycled.
        answers.ready.clear()
        runWrite(&answers, "grant 2\n", change: 2)
        settle(&answers, through: 2, succeeded: true, settledWrites: &settled)
        answers.releaseReady { recycled.append(String(buffer: $0)) }
        #expect(readyText(answers) == "grant 2\n")
        #expect(recycled == ["grant 1\n", ""])
    }

    @Test func droppingHandsOverTheNoticeOfEveryWriteNotYetSettled() {
        var answers = queue()
        runWrite(&answers, "grant 1\n", change: 1, notice: true)
        runWrite(&answers, "grant 2\n", change: 2, notice: true)
        _ = waiting(&answers, nil, change: 0)
        runWrite(&answers, "grant 3\n", change: 3, notice: true)
        runWrite(&answers, "grant 4\n", change: 4, notice: false)
        var settled: [UInt64] = []
        settle(&answers, through: 1, succeeded: true, settledWrites: &settled)
        var dropped: [UInt64] = []
        answers.dropWaiting { dropped.append($0.sequence) }
        #expect(dropped == [2, 3])
        #expect(!answers.hasWaiting && answers.runWrites.isEmpty && !answers.canJoinRun)
    }
}
