/// How long an event loop that runs out of work polls for more before it sleeps: grown while the loop's
/// sleeps keep ending within `limit` (work arrives in a steady stream: polling catches it without a
/// thread wake-up), shrunk to nothing while they last longer (sparse traffic: polling would only burn
/// CPU). The rule of Linux's haltpoll cpuidle governor, applied to `epoll_wait`.
///
/// Why poll at all: on this kind of machine (a 2-core virtual machine) a sleeping thread's wake-up is most
/// of a lone client's round trip, and under load a loop that sleeps between bursts pays a wake-up each
/// time. Measured with `entitled-bench checks` and a fixed 50 µs poll: one connection's p50 22 against
/// Redis's 58 µs (58 without polling), 50 connections 1.28x Redis's checks at 0.78x its CPU per check
/// (0.87x to 0.96x without). Adapting keeps that where requests stream in and costs nothing where they
/// do not.
struct AdaptivePoll {
    /// The longest poll (nanoseconds); 0 never polls.
    let limit: UInt64
    /// How long the next poll lasts (nanoseconds): 0, or between `smallest` and `limit`.
    private(set) var window: UInt64 = 0

    /// The first window after sleeps show work arriving (or `limit` when that is shorter).
    static let smallest: UInt64 = 5_000

    init(limitNanoseconds: UInt64) {
        limit = limitNanoseconds
    }

    /// The loop found nothing while polling (or did not poll) and then slept `nanoseconds` before it was
    /// woken (`woken`) or its timeout ran out.
    mutating func slept(nanoseconds: UInt64, woken: Bool) {
        guard limit > 0 else { return }
        if woken, window + nanoseconds <= limit {
            // A poll that long would have caught it: poll longer next time.
            window = min(limit, max(min(Self.smallest, limit), window * 2))
        } else if !woken || nanoseconds > limit {
            // Work came later than any poll would wait for (or not at all): poll less.
            window /= 2
            if window < min(Self.smallest, limit) { window = 0 }
        }
    }
}
