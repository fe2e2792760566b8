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
        answers.committed(through: 7, succeeded: true) { settled.append($0.token) }
        answers.releaseReady()
        #expect(settled.count == 1)
        #expect(readyText(answers) == "check 1\ngrant 1\ncheck 2\n")
        #expect(answers.uncommittedSequence == 8)

        answers.committed(through: 8, succeeded: true) { settled.append($0.token) }
        answers.releaseReady()
        #expect(settled.count == 2)
        #expect(readyText(answers) == "check 1\ngrant 1\ncheck 2\ngrant 2\ncheck 3\n")
        #expect(!answers.hasWaiting && answers.uncommittedSequence == nil)
    }

    @Test func aFailedCommitSettlesItsAnswersWithoutMovingTheAcknowledgedMark() {
        var answers = queue()
        _ = waiting(&answers, "grant 1\n", change: 3)
        _ = waiting(&answers, "grant 2\n", change: 4)
        answers.committed(through: 3, succeeded: false) { element in
            element.answer = ByteBuffer(string: "failed\n")
        }
        answers.releaseReady()
        #expect(readyText(answers) == "failed\n")
        #expect(answers.acknowledgedSequence == 0)
        // Only the write still waiting keeps a commit due.
        #expect(answers.uncommittedSequence == 4)
        answers.committed(through: 4, succeeded: false) { $0.answer = ByteBuffer(string: "failed too\n") }
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
        answers.committed(through: 2, succeeded: true) { _ in }
        answers.releaseReady()
        #expect(readyText(answers) == "grant\nnext\n")
    }

    @Test func droppingHandsOverEveryWaitingAnswer() {
        var answers = queue()
        let first = waiting(&answers, "a\n", change: 1)
        let second = waiting(&answers, nil, change: 0)
        var dropped: [UInt64] = []
        answers.dropWaiting { dropped.append($0.token) }
        #expect(dropped == [first, second])
        #expect(!answers.hasWaiting)
    }
}
