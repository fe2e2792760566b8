import EntitledCore
import EntitledWire
import NIOCore

/// `watch`, `unwatch`, pushed lines and expiry timers. Everything here runs on the connection's loop.
extension ServedConnection {
    /// The most watches one connection may hold (subjects, and `all`).
    static let maximumWatches = 1000
    /// Pushed lines a watcher leaves unread beyond this many bytes close its connection: a watcher that
    /// stopped reading must not grow the server's memory without bound.
    static let maximumPushBacklog = 4 << 20

    /// Answers a `watch` or `unwatch`; returns the code of the error it was answered with, if any.
    @discardableResult
    func handle(_ request: RequestProcessor.WatchRequest, id: ByteBuffer?) -> ErrorCode? {
        var watches = self.watches ?? ConnectionWatches()
        let store = context.processor.store
        switch request {
        case .watch(let target):
            if watches.count >= Self.maximumWatches, !watches.contains(target) {
                let error = WireError(.badRequest, "a connection may hold at most \(Self.maximumWatches) watches; unwatch some first")
                appendAnswer { ResponseEncoder.write(error, id: id, into: &$0) }
                return error.code
            }
            watches.add(target)
            self.watches = watches
            // Timers for what grants access now and will stop by itself.
            switch target {
            case .all:
                for end in store.upcomingAccessEnds() { scheduleTimer(for: end.id, at: end.at) }
            case .subject(let subject):
                let now = store.now()
                // Every membership the watch covers: also those bought on its device and claimed since.
                for membership in store.membershipsEverVisible(to: subject) { scheduleTimer(for: membership, now: now) }
            }
        case .unwatch(let target):
            let timers = watches.timerDeadlines.count
            watches.remove(target)
            self.watches = watches.count == 0 ? nil : watches
            loop.noteStaleExpiryTimers(timers - (self.watches?.timerDeadlines.count ?? 0))
        }
        context.processor.watchHub.register(self, for: self.watches?.keys ?? WatchKeys())
        let count = self.watches?.count ?? 0
        appendAnswer { ResponseEncoder.write(.watches(count), id: id, into: &$0) }
        return nil
    }

    /// Pushes a line for each of `memberships` this connection still watches, after change `sequence`.
    func deliver(cause: String, memberships: [Membership], sequence: UInt64, formerOwner: Subject? = nil) {
        guard !isClosed, let watches else { return }
        let now = context.processor.store.now()
        // A transfer's former owner is told too: the membership, now another user's, is gone from it.
        let watchesFormerOwner = formerOwner.map { watches.covers(owner: $0) } ?? false
        for membership in memberships where watchesFormerOwner || watches.covers(membership) {
            ResponseEncoder.writePush(cause: cause, membership: membership, at: now, sequence: sequence, into: &answers.ready)
            scheduleTimer(for: membership, now: now)
        }
        pushed()
    }

    /// A watched membership's timer fired: push `expired` if its access has stopped by itself, or wait
    /// again if a change moved its end.
    func expiryDue(of id: MembershipID, deadline: Int64) {
        guard !isClosed, var watches, watches.timerDeadlines[id] == deadline else { return }
        watches.timerDeadlines[id] = nil
        self.watches = watches
        let now = context.processor.store.now()
        guard let membership = context.processor.store.membership(withID: id), watches.covers(membership),
            membership.revocation == nil, let stops = membership.accessStops
        else { return }
        if stops > now {
            scheduleTimer(for: id, at: stops)
            return
        }
        // `expired`, not `expiration`: that is the cause of an applied expiration event.
        ResponseEncoder.writePush(cause: "expired", membership: membership, at: now, sequence: nil, into: &answers.ready)
        pushed()
    }

    /// Sets the timer of `membership` if it grants access at `now` and stops at a known later time.
    private func scheduleTimer(for membership: Membership, now: Timestamp) {
        guard membership.revocation == nil, let stops = membership.accessStops, stops > now else { return }
        scheduleTimer(for: membership.id, at: stops)
    }

    private func scheduleTimer(for id: MembershipID, at moment: Timestamp) {
        let deadline = moment.millisecondsSinceEpoch
        guard watches != nil, watches?.timerDeadlines[id] != deadline else { return }
        if watches?.timerDeadlines.updateValue(deadline, forKey: id) != nil { loop.noteStaleExpiryTimers(1) }
        loop.scheduleExpiry(of: id, at: deadline, for: self)
    }

    private func pushed() {
        if unsentByteCount > Self.maximumPushBacklog {
            context.logger.warning(
                "closing a watching connection that does not read its pushed lines",
                metadata: ["unreadBytes": "\(unsentByteCount)"]
            )
            close()
            return
        }
        scheduleFlush()
    }

}

extension ConnectionWatches {
    func contains(_ target: WatchTarget) -> Bool {
        switch target {
        case .all: everything
        case .subject(let subject): subjects.contains(subject)
        }
    }

}

extension ServedConnection {
    /// Ends every watch of this connection, without an answer: when it closes, or loses its role.
    func dropAllWatches() {
        guard let dropped = watches else { return }
        watches = nil
        context.processor.watchHub.register(self, for: WatchKeys())
        loop.noteStaleExpiryTimers(dropped.timerDeadlines.count)
    }
}
