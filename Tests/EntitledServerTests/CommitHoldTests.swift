import Testing

@testable import EntitledServer

/// `CommitHold`: after a commit of many connections, the next waits for them to come back, for a while.
@Suite struct CommitHoldTests {
    @Test func aCommitOfFewConnectionsIsFollowedByTheNextAtOnce() {
        let few = CommitHold.smallestHeldGroup - 1
        #expect(CommitHold.after(committed: few, waiting: 30, askedAt: 1_000_000, now: 1_200_000) == nil)
        #expect(CommitHold.after(committed: 1, waiting: 0, askedAt: 1_000_000, now: 1_200_000) == nil)
    }

    @Test func aCommitOfManyWaitsForThemAndThoseAlreadyWaitingForTwiceTheTimeItTook() throws {
        // Asked for at 1.0 ms, answered at 1.2 ms, 10 connections in it, 4 already waiting.
        let hold = try #require(CommitHold.after(committed: 10, waiting: 4, askedAt: 1_000_000, now: 1_200_000))
        #expect(hold.target == 14)
        #expect(hold.deadline == 1_600_000)
    }

    @Test func theHoldEndsWhenEveryoneIsBackOrAtItsDeadlineWhicheverIsFirst() {
        let hold = CommitHold(deadline: 2_000_000, target: 14)
        #expect(!hold.isOver(waiting: 13, now: 1_999_999))
        #expect(hold.isOver(waiting: 14, now: 1_300_000), "everyone back: no reason to wait")
        #expect(hold.isOver(waiting: 20, now: 1_300_000))
        #expect(hold.isOver(waiting: 1, now: 2_000_000), "the deadline: whoever is there goes")
    }

    @Test func noHoldIsLongerThanTheLongestWhateverTheCommitTook() throws {
        // A commit that took a second (a slow disk) does not make the next wait two.
        let hold = try #require(CommitHold.after(committed: 50, waiting: 0, askedAt: 0, now: 1_000_000_000))
        #expect(hold.deadline == 1_000_000_000 + CommitHold.longest)
    }

    @Test func aClockReadBeforeTheCommitWasAskedForHoldsNothing() throws {
        // Monotonic readings from two threads can disagree by a little: taken as no time at all.
        let hold = try #require(CommitHold.after(committed: 50, waiting: 0, askedAt: 2_000, now: 1_000))
        #expect(hold.deadline == 1_000)
        #expect(hold.isOver(waiting: 0, now: 1_000))
    }
}
