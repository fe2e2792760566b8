import EntitledCore
import EntitledWire
import NIOCore

/// `watch`, `unwatch` and pushed lines. Everything here runs on the connection's loop.
///
/// A watch costs the same whatever the store holds: it registers keys with the `WatchHub`, and holds no
/// timer of its own (the store schedules when access ends, for every watcher at once).
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
        switch request {
        case .watch(let target):
            if let error = refusal(ofWatching: target, holding: watches) {
                appendAnswer { ResponseEncoder.write(error, id: id, into: &$0) }
                return error.code
            }
            watches.add(target)
        case .unwatch(let target):
            watches.remove(target)
        }
        do {
            try context.processor.watchHub.register(self, for: watches.keys)
        } catch {
            let refused = error.wireError
            appendAnswer { ResponseEncoder.write(refused, id: id, into: &$0) }
            return refused.code
        }
        self.watches = watches.count == 0 ? nil : watches
        appendAnswer { ResponseEncoder.write(.watches(watches.count), id: id, into: &$0) }
        return nil
    }

    /// Why `target` may not be added to `watches`, if it may not.
    private func refusal(ofWatching target: WatchTarget, holding watches: ConnectionWatches) -> WireError? {
        if case .all = target, access.watchScope != .everything {
            return WireError(.forbidden, "watching every subject (all) needs the admin role; watch given users or devices instead")
        }
        if watches.count >= Self.maximumWatches, !watches.contains(target) {
            return WireError(.badRequest, "a connection may hold at most \(Self.maximumWatches) watches; unwatch some first")
        }
        return nil
    }

    /// Pushes a line for each of `memberships` this connection still watches: after change `sequence`, or
    /// with no number when their access ended by itself (cause `expired`).
    func deliver(cause: String, memberships: [Membership], sequence: UInt64?, formerOwner: Subject? = nil) {
        guard !isClosed, let watches else { return }
        let now = context.processor.store.now()
        // A transfer's former owner is told too: the membership, now another user's, is gone from it.
        let watchesFormerOwner = formerOwner.map { watches.covers(owner: $0) } ?? false
        for membership in memberships where watchesFormerOwner || watches.covers(membership) {
            ResponseEncoder.writePush(cause: cause, membership: membership, at: now, sequence: sequence, into: &answers.ready)
        }
        pushed()
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
        guard watches != nil else { return }
        watches = nil
        context.processor.watchHub.unregister(self)
    }

    /// Ends a watch of every subject that the connection's access no longer allows (its token now has
    /// the check role), without an answer.
    func dropWatchesBeyondAccess() {
        guard access.watchScope != .everything, var held = watches, held.everything else { return }
        held.remove(.all)
        watches = held.count == 0 ? nil : held
        // Fewer keys than registered: never refused.
        try? context.processor.watchHub.register(self, for: held.keys)
    }
}
