/// How long a loop waits, after a handed-off commit came back, before it asks for the next one: until the
/// connections that commit answered have sent their next writes, for at most about two commits' time.
///
/// Why: with many connections each writing one request at a time (a closed loop: a client sends its next
/// write once the last is answered), the next commit asked for at once holds only the writes read while
/// the last one was syncing, about half of them; the connections just answered are still on their way
/// back and wait for the commit after it. Every group then pays a sync (`fdatasync`: about 40 µs of CPU
/// here, besides its wait) and two thread wake-ups for half the writes. Waiting for them makes groups of
/// nearly all. Measured with `entitled-bench durability --connections 50` (release, 2 cores, alternated
/// with the same build without the hold): groups of 44 at 1,800 a second instead of 21 at 4,000, 10.7-10.9
/// against 14.1-14.7 µs of server CPU per write, at a rate as high or higher (78,600-83,500 against
/// 68,000-80,200 writes a second); the 95/5 check/grant mix with `--fsync always` 99,000-102,000 against
/// 84,000-89,000 requests a second.
///
/// A hold is made only after a commit of at least `smallestHeldGroup` connections: a lone writer or a
/// few never wait for it (a lone writer's commit is not handed off at all). It ends as soon as as many
/// connections wait as were answered plus those already waiting, and at the latest twice the time the
/// last commit took (asked for to answered) after it came back, and never more than `longest`: the
/// connections that do come back take about that long, and a write waits at most about two more syncs
/// than it would have.
struct CommitHold: Equatable {
    /// When the next commit is asked for even if not everyone is back (monotonic nanoseconds).
    let deadline: UInt64
    /// How many connections with writes waiting end the hold at once.
    let target: Int

    /// A commit of fewer connections is followed by the next at once.
    static let smallestHeldGroup = 8
    /// The longest hold (nanoseconds), whatever the last commit took.
    static let longest: UInt64 = 1_000_000

    /// The hold after a commit of `committed` connections, asked for at `askedAt` and answered at `now`
    /// (monotonic nanoseconds), while `waiting` connections already have writes for the next one; `nil`
    /// when the next commit should not wait. No hold lasts more than `longest` nanoseconds.
    static func after(committed: Int, waiting: Int, askedAt: UInt64, now: UInt64, longest: UInt64 = longest) -> CommitHold? {
        guard committed >= smallestHeldGroup else { return nil }
        let took = now >= askedAt ? now - askedAt : 0
        return CommitHold(deadline: now + min(2 * took, longest), target: committed + waiting)
    }

    /// Whether the next commit may be asked for, with `waiting` connections' writes ready, at `now`.
    func isOver(waiting: Int, now: UInt64) -> Bool {
        waiting >= target || now >= deadline
    }
}
