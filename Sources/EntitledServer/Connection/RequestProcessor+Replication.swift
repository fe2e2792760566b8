import EntitledCore
import EntitledWire
import NIOConcurrencyHelpers
import NIOCore

extension RequestProcessor {
    /// A write's answer on a node of a cluster, once its group's fate is known.
    public struct ReplicatedAnswer: Sendable {
        /// The answer line.
        public var line: ByteBuffer
        /// The code it failed with, if it did (for the statistics).
        public var error: ErrorCode?
    }

    /// Runs a write through the replicated log: it is decided on the log's thread, against a replica
    /// that has every committed change, and `completion` gets its answer once its group committed (the
    /// answer, `seq` included, and its notice published to watchers) or failed (`unavailable`, with the
    /// log's reason). A write the store refused (`not_found`, `conflict`) changed nothing: it is answered
    /// with that error whatever became of its group. Called on a connection's loop; `completion` runs on
    /// a thread of the log's.
    public func replicate(_ request: Request, access: ConnectionAccess, id: ByteBuffer?, completion: @escaping @Sendable (ReplicatedAnswer) -> Void) {
        guard let replicated else { return }
        // Written by `decide` on the log's thread, read by `completion` on one of its threads.
        let decision = NIOLockedValueBox<Result<Outcome, WireError>?>(nil)
        let store = self.store
        let watchHub = self.watchHub
        let sequenceWaiters = self.sequenceWaiters
        replicated.submit(
            { [self] in
                let result = run(request, access: access)
                decision.withLockedValue { $0 = result }
            },
            completion: { failure in
                var line = ByteBuffer()
                var code: ErrorCode?
                switch (decision.withLockedValue { $0 }, failure) {
                case (.success(let outcome)?, nil):
                    ResponseEncoder.write(outcome.response, id: id, sequence: outcome.sequence, into: &line)
                    if let notice = outcome.notice { watchHub.publish(notice) }
                    // This node's own committed change: reads waiting for it may go.
                    sequenceWaiters.advanced(to: store.sequence)
                case (.failure(let error)?, _):
                    ResponseEncoder.write(error, id: id, into: &line)
                    code = error.code
                case (.success?, let failure?):
                    Self.writeReplicationFailure(failure, id: id, into: &line)
                    code = .unavailable
                case (nil, let failure):
                    // The group failed before this write was decided.
                    Self.writeReplicationFailure(failure ?? JournalError(reason: "the write was not run"), id: id, into: &line)
                    code = .unavailable
                }
                completion(ReplicatedAnswer(line: line, error: code))
            }
        )
    }

    /// The answer to a write whose group of writes did not commit.
    static func writeReplicationFailure(_ error: JournalError, id: ByteBuffer?, into output: inout ByteBuffer) {
        ResponseEncoder.write(WireError(.unavailable, "the write was not committed: \(error.reason)"), id: id, into: &output)
    }

    /// Asks the system of record for a snapshot on a background thread (it may take seconds, and checks
    /// go on meanwhile) and calls `completion` with the answer line, in the shape of a standalone
    /// server's (`file` is where the snapshot is kept).
    func takeReplicatedSnapshot(of replicated: any ReplicatedLog, id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer) -> Void) {
        Self.answerOffTheLoop(id: id, completion: completion) {
            do throws(JournalError) {
                let snapshot = try replicated.snapshot()
                return .success(
                    Response.snapshot(
                        file: snapshot.location, sequence: snapshot.sequence, bytes: snapshot.bytes,
                        milliseconds: Int64(snapshot.milliseconds), memberships: snapshot.memberships
                    )
                )
            } catch {
                return .failure(WireError(.unavailable, "the snapshot failed: \(error.reason)"))
            }
        }
    }

    /// What this node's watchers are told of changes another node made, read from `store` once they are
    /// applied: one notice per change that touched memberships, with the cause a standalone server gives.
    /// An erasure names nobody once applied (the person's memberships are gone), so it is not announced;
    /// catalog changes are not announced in standalone mode either.
    static func notices(for applied: [ReplicatedChange], in store: EntitlementStore, watchHub: WatchHub) -> [AccessNotice] {
        guard watchHub.hasWatchers else { return [] }
        var notices: [AccessNotice] = []
        for replicated in applied {
            let cause: String
            let memberships: [Membership]
            var formerOwner: Subject?
            switch replicated.change {
            case .create(let membership, _):
                cause = "grant"
                memberships = [store.membership(withID: membership.id) ?? membership]
            case .revoke(let id, _):
                cause = "revoke"
                memberships = store.membership(withID: id).map { [$0] } ?? []
            case .event(let event, let result):
                cause = event.kind.name
                memberships = [store.membership(withID: result.id) ?? result]
            case .claim(let device, let user):
                // The device's memberships that the user now owns: the ones the claim moved (and any the
                // user had claimed before, told again, which a watcher takes as no change).
                cause = "claim"
                let subject = Subject(user: user, device: device)
                memberships = (subject.map { store.memberships(visibleTo: $0) } ?? []).filter { $0.user == user && $0.device == device }
            case .transfer(let id, _):
                cause = "transfer"
                memberships = store.membership(withID: id).map { [$0] } ?? []
                formerOwner = store.formerOwner(of: id)
            case .define, .undefine, .erase:
                continue
            }
            if !memberships.isEmpty {
                notices.append(AccessNotice(cause: cause, memberships: memberships, sequence: replicated.sequence, formerOwner: formerOwner))
            }
        }
        return notices
    }
}
