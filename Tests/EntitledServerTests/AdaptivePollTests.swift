import Testing

@testable import EntitledServer

/// `AdaptivePoll` polls where work streams in and not where it is sparse.
@Suite struct AdaptivePollTests {
    @Test func sleepsEndedByWorkWithinTheLimitGrowThePollUpToTheLimit() {
        var poll = AdaptivePoll(limitNanoseconds: 50_000)
        #expect(poll.window == 0, "no poll before any sleep says work streams in")
        poll.slept(nanoseconds: 30_000, woken: true)
        #expect(poll.window == AdaptivePoll.smallest)
        var windows: [UInt64] = []
        for _ in 0..<6 {
            // Work 5 µs after each poll ran out: within the limit while the poll is at most 45 µs.
            poll.slept(nanoseconds: 5_000, woken: true)
            windows.append(poll.window)
        }
        #expect(windows == [10_000, 20_000, 40_000, 50_000, 50_000, 50_000])
    }

    @Test func longSleepsAndTimeoutsShrinkThePollToNothing() {
        var poll = AdaptivePoll(limitNanoseconds: 50_000)
        for _ in 0..<5 { poll.slept(nanoseconds: 1_000, woken: true) }
        #expect(poll.window == 50_000)
        poll.slept(nanoseconds: 2_000_000, woken: true)
        #expect(poll.window == 25_000)
        poll.slept(nanoseconds: 1_000, woken: false)  // a timer's timeout, not work
        #expect(poll.window == 12_500)
        poll.slept(nanoseconds: 900_000, woken: true)
        #expect(poll.window == 6_250)
        poll.slept(nanoseconds: 900_000, woken: true)
        #expect(poll.window == 0, "below the smallest poll it stops polling")
        poll.slept(nanoseconds: 900_000, woken: true)
        #expect(poll.window == 0)
    }

    @Test func workThatAPollOfTheLimitWouldNotHaveCaughtDoesNotGrowIt() {
        var poll = AdaptivePoll(limitNanoseconds: 50_000)
        poll.slept(nanoseconds: 10_000, woken: true)
        poll.slept(nanoseconds: 10_000, woken: true)
        #expect(poll.window == 10_000)
        // Polled 10 µs, then slept 45 µs: 55 µs in all, beyond the limit; neither grown nor shrunk.
        poll.slept(nanoseconds: 45_000, woken: true)
        #expect(poll.window == 10_000)
    }

    @Test func aLimitOfZeroNeverPollsAndASmallLimitIsNeverExceeded() {
        var off = AdaptivePoll(limitNanoseconds: 0)
        for _ in 0..<10 { off.slept(nanoseconds: 1, woken: true) }
        #expect(off.window == 0)
        var small = AdaptivePoll(limitNanoseconds: 3_000)
        for _ in 0..<10 { small.slept(nanoseconds: 1, woken: true) }
        #expect(small.window == 3_000)
    }
}
