import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The receiver's open connections and what each is doing, for `--max-connections`.
///
/// A slot held by a slow client must not keep a store's delivery out (issue 44: 128 connections trickling
/// 1 MiB bodies a byte every 8 s left two signed Stripe deliveries unanswered). So, as nginx keeps accepting
/// when its worker connections run out by closing the connections that wait longest, the listener accepts one
/// connection beyond the maximum, and each time it does, this closes the connection that has waited longest
/// for its request: one idle between requests first (nothing is lost), else the one whose request began
/// earliest and is still not complete. A genuine delivery arrives whole in milliseconds, so it is the youngest
/// and the last to go. Only a connection that has waited at least `evictableAfter` may be closed, so a burst of
/// genuine deliveries waits in the listen queue as before rather than cutting each other off; a connection whose
/// request is complete and being answered is never closed.
///
/// The listener (`AvailableConnectionsDelegate`, on the server channel's loop) counts connections; each
/// connection's `RequestDeadlineHandler` (on its own loop) reports what it does. Both meet under one lock.
final class ConnectionRoster: Sendable {
    /// Why a connection is closed from outside its own handler.
    enum Expiry: Sendable {
        /// It waited longest while the listener was past `--max-connections`.
        case evicted(waited: TimeAmount)
    }

    /// What a connection does now, as its handler reports it.
    enum Activity: Sendable {
        /// Between requests (a kept-alive connection, or one that has sent nothing yet) since then.
        case idle(since: NIODeadline)
        /// Reading a request whose first byte came then.
        case reading(since: NIODeadline)
        /// A complete request is being answered: never evicted.
        case answering
    }

    private struct Member {
        var activity: Activity
        /// Closes the connection on its own loop.
        let expire: @Sendable (Expiry) -> Void
        var expiring = false
    }

    private struct State {
        var open = 0
        var members: [Int: Member] = [:]
        var nextID = 0
        var recheck: Scheduled<Void>?
    }

    /// Connections served at once; one more is accepted to make room (`--max-connections`).
    let maximum: Int
    /// How long a connection must have waited for its request before it may be closed to make room.
    let evictableAfter: TimeAmount
    private let state = NIOLockedValueBox(State())
    /// Where a later look is scheduled while every candidate is too young to close.
    private let loop: any EventLoop
    private let metrics: StoreMetrics
    private let logger: Logger

    init(maximum: Int, evictableAfter: TimeAmount = .seconds(1), loop: any EventLoop, metrics: StoreMetrics, logger: Logger) {
        self.maximum = maximum
        self.evictableAfter = evictableAfter
        self.loop = loop
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: The listener's side

    /// Whether the listener may accept another connection: up to one beyond the maximum, which makes room.
    var isAccepting: Bool { state.withLockedValue { $0.open <= maximum } }

    /// The listener accepted a connection; past the maximum, another makes room.
    func opened() {
        state.withLockedValue { $0.open += 1 }
        makeRoom()
    }

    /// A connection closed.
    func closed() {
        state.withLockedValue { $0.open -= 1 }
    }

    // MARK: The connections' side

    /// A new connection, idle until its first byte; `expire` closes it on its own loop. Returns its id.
    func join(expire: @escaping @Sendable (Expiry) -> Void) -> Int {
        state.withLockedValue { state in
            state.nextID += 1
            state.members[state.nextID] = Member(activity: .idle(since: .now()), expire: expire)
            return state.nextID
        }
    }

    /// The connection's handler says what it does now.
    func report(_ id: Int, _ activity: Activity) {
        state.withLockedValue { $0.members[id]?.activity = activity }
    }

    /// The connection chosen to make room turned out busy by the time its loop looked (a request came in
    /// whole meanwhile): it stays, and another is looked for.
    func spare(_ id: Int) {
        state.withLockedValue { $0.members[id]?.expiring = false }
        makeRoom()
    }

    /// The connection closed (or its handler went): it is no candidate any more.
    func leave(_ id: Int) {
        state.withLockedValue { _ = $0.members.removeValue(forKey: id) }
    }

    // MARK: Making room

    /// While more connections are open than the maximum (and than those already being closed make up for),
    /// closes those that waited longest, if they waited long enough; else looks again when they will have.
    func makeRoom() {
        let now = NIODeadline.now()
        let victims: [(expire: @Sendable (Expiry) -> Void, waited: TimeAmount, reading: Bool)] = state.withLockedValue { state in
            let closing = state.members.values.count(where: \.expiring)
            let needed = state.open - closing - maximum
            guard needed > 0 else { return [] }
            // Idle connections first (nothing is lost), then the request that began earliest.
            let candidates = state.members.compactMap { id, member -> (id: Int, rank: Int, since: NIODeadline)? in
                guard !member.expiring else { return nil }
                switch member.activity {
                case .idle(let since): return (id, 0, since)
                case .reading(let since): return (id, 1, since)
                case .answering: return nil
                }
            }
            let eligible = candidates.filter { $0.since + evictableAfter <= now }.sorted { ($0.rank, $0.since) < ($1.rank, $1.since) }.prefix(needed)
            if eligible.count < needed {
                // Look again once the oldest other candidate may go; shortly, if every connection is answering.
                let waiting = candidates.filter { $0.since + evictableAfter > now }.map(\.since).min()
                scheduleRecheck(&state, at: waiting.map { $0 + evictableAfter } ?? now + .milliseconds(250))
            }
            return eligible.compactMap { chosen in
                state.members[chosen.id]?.expiring = true
                return state.members[chosen.id].map { ($0.expire, now - chosen.since, chosen.rank == 1) }
            }
        }
        for victim in victims {
            metrics.evicted(reading: victim.reading)
            logger.warning(
                "closed the connection that waited longest for a request (\(victim.waited.nanoseconds / 1_000_000) ms, \(victim.reading ? "its request incomplete" : "idle")) to make room for a new one: --max-connections \(maximum) are open"
            )
            victim.expire(.evicted(waited: victim.waited))
        }
    }

    private func scheduleRecheck(_ state: inout State, at deadline: NIODeadline) {
        guard state.recheck == nil else { return }
        state.recheck = loop.scheduleTask(deadline: deadline) { [self] in
            self.state.withLockedValue { $0.recheck = nil }
            self.makeRoom()
        }
    }
}
