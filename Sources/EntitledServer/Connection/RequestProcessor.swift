import Dispatch
import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

/// Answers request lines from the store: decode, run, encode. Reads and everything that needs no disk
/// are answered inline, with no I/O and no thread hop, so the connection handler calls it on its event
/// loop. A write is applied at once but may be acknowledged only once the log holds it: its answer comes
/// back as `Answer.afterLog` for the handler to release when the log says so.
public struct RequestProcessor: Sendable {
    public let store: EntitlementStore
    /// The data directory behind the store; `nil` keeps everything in memory (tests).
    public let durable: DurableStore?
    /// The system of record a node of a cluster shares with the others; `nil` for a standalone server.
    /// With it, every write is decided and committed through it (`submit`), and the changes other nodes
    /// made are announced to this node's watchers.
    public let replicated: (any ReplicatedLog)?
    /// What a grant does with a purchase another user's membership holds (`--transfer-rule`).
    public var transferRule = TransferRule.transfer
    /// Where changes are announced to the connections that watch them.
    let watchHub = WatchHub()
    /// The connections whose `minSeq` read waits for a change.
    let sequenceWaiters = SequenceWaiters()

    public init(store: EntitlementStore) {
        self.store = store
        self.durable = nil
        self.replicated = nil
    }

    public init(durable: DurableStore) {
        self.store = durable.store
        self.durable = durable
        self.replicated = nil
    }

    /// A node of a cluster: `store` is its replica of `replicated`, whose journal records the store's
    /// changes. Sets `replicated`'s change observer: what other nodes change is told to this node's
    /// watchers and releases the reads waiting for it.
    public init(store: EntitlementStore, replicated: any ReplicatedLog) {
        self.store = store
        self.durable = nil
        self.replicated = replicated
        let watchHub = self.watchHub
        let sequenceWaiters = self.sequenceWaiters
        replicated.setChangeObserver { applied in
            guard let last = applied.last else { return }
            for notice in Self.notices(for: applied, in: store, watchHub: watchHub) { watchHub.publish(notice) }
            sequenceWaiters.advanced(to: last.sequence)
        }
    }

    /// What became of a request's answer.
    public enum Answer: Sendable {
        /// The answer was appended to the output.
        case written
        /// The request changed the store; `success` is its answer once the log acknowledges change
        /// `sequence`, and `notice` is then published to watchers. If the log fails instead, the answer
        /// is an `unavailable` error with `id`, and nothing is published.
        case afterLog(sequence: UInt64, success: ByteBuffer, id: ByteBuffer?, notice: AccessNotice?)
        /// A snapshot was asked for: run `takeSnapshot(id:completion:)` and answer with what it gives.
        case afterSnapshot(id: ByteBuffer?)
        /// A `watch` or `unwatch`: the connection keeps its watches, so it answers.
        case watch(WatchRequest, id: ByteBuffer?)
        /// An `auth`: the connection keeps its access, so it checks the token and answers.
        case auth(token: String, id: ByteBuffer?)
        /// A `stats`: the counters belong to the server's loops, so the connection answers.
        case stats(id: ByteBuffer?)
        /// A `reload`: the tokens belong to the server, so the connection has it re-read the auth file.
        case reload(id: ByteBuffer?)
        /// A read with `minSeq` that the store has not reached: the connection holds it (and every line
        /// after it) until the store applies change `sequence`, then answers the line again, or answers
        /// `stale` once `--min-seq-wait` has passed.
        case afterSequence(UInt64, id: ByteBuffer?)
        /// A write on a node of a cluster: the connection runs it with `replicate(_:access:id:completion:)`
        /// and holds every line after it until its answer comes.
        case afterReplication(Request, id: ByteBuffer?)
    }

    /// What answering one request was, for the statistics: its operation once the line decoded, and the
    /// code of the error it was answered with, if any.
    public struct Note: Sendable {
        public var operation: Request.Operation?
        public var error: ErrorCode?

        public init() {}
    }

    /// What a connection is asked to start or stop watching.
    public enum WatchRequest: Sendable {
        case watch(WatchTarget)
        case unwatch(WatchTarget?)
    }

    /// Answers one request line from a connection with `access`: appends its answer to `output`, or
    /// says how it will be answered.
    @discardableResult
    public func respond(to line: ByteBuffer, access: ConnectionAccess = .open, into output: inout ByteBuffer) -> Answer {
        var note = Note()
        return respond(to: line, access: access, into: &output, noting: &note)
    }

    /// As `respond(to:access:into:)`, and notes the request's operation and error code in `note`.
    @inline(__always)
    public func respond(to line: ByteBuffer, access: ConnectionAccess, into output: inout ByteBuffer, noting note: inout Note) -> Answer {
        if let check = CompactCheckDecoder.decode(line: line, permitting: access.permissions) {
            answerCheck(check.query, id: check.id, into: &output, noting: &note)
            return .written
        }
        let decoded = RequestDecoder.decode(line: line, permitting: access.permissions)
        let request: Request
        switch decoded.result {
        case .success(let decodedRequest): request = decodedRequest
        case .failure(let error):
            note.error = error.code
            ResponseEncoder.write(error, id: decoded.id, into: &output)
            return .written
        }
        // The one comparison `minSeq` costs a request without it; the store is looked at only with it.
        if decoded.minimumSequence != 0, decoded.minimumSequence > store.sequence {
            note.operation = request.op
            return .afterSequence(decoded.minimumSequence, id: decoded.id)
        }
        if case .check(let query) = request {
            answerCheck(query, id: decoded.id, into: &output, noting: &note)
            return .written
        }
        note.operation = request.op
        switch request {
        case .snapshot:
            guard durable != nil || replicated != nil else {
                let error = WireError(.internal, "this server keeps no data directory, so it cannot write a snapshot")
                note.error = error.code
                ResponseEncoder.write(error, id: decoded.id, into: &output)
                return .written
            }
            return .afterSnapshot(id: decoded.id)
        case .watch(let target): return .watch(.watch(target), id: decoded.id)
        case .unwatch(let target): return .watch(.unwatch(target), id: decoded.id)
        case .auth(let token): return .auth(token: token, id: decoded.id)
        case .stats: return .stats(id: decoded.id)
        case .reload: return .reload(id: decoded.id)
        default: break
        }
        if replicated != nil, request.isWrite { return .afterReplication(request, id: decoded.id) }
        switch run(request, access: access) {
        case .failure(let error):
            note.error = error.code
            ResponseEncoder.write(error, id: decoded.id, into: &output)
            return .written
        case .success(let outcome):
            // A write moved the store on: reads waiting for its change (`minSeq`) may go.
            if let sequence = outcome.sequence { sequenceWaiters.advanced(to: sequence) }
            guard let sequence = outcome.sequence, let log = durable?.log, sequence > log.acknowledgedSequence else {
                ResponseEncoder.write(outcome.response, id: decoded.id, sequence: outcome.sequence, into: &output)
                if let notice = outcome.notice { watchHub.publish(notice) }
                return .written
            }
            // Room for a membership answer from the start: growing an empty buffer reallocated it twice.
            var success = ByteBufferAllocator().buffer(capacity: 768)
            ResponseEncoder.write(outcome.response, id: decoded.id, sequence: sequence, into: &success)
            return .afterLog(sequence: sequence, success: success, id: decoded.id, notice: outcome.notice)
        }
    }

    /// The hot path, answered straight from the store's result: no `Response` or `Outcome` to build and
    /// copy (callgrind counted several hundred instructions a check in their copies).
    @inline(__always)
    private func answerCheck(_ query: AccessQuery, id: ByteBuffer?, into output: inout ByteBuffer, noting note: inout Note) {
        note.operation = .check
        do throws(StoreError) {
            ResponseEncoder.write(.access(try store.check(query)), id: id, into: &output)
        } catch {
            let wireError = Self.wireError(error)
            note.error = wireError.code
            ResponseEncoder.write(wireError, id: id, into: &output)
        }
    }

    /// What running a request gave: the answer, the number of the last change it reflects (for a write,
    /// to be durable before the answer goes out), and what watchers are told once it is.
    public struct Outcome: Sendable {
        public var response: Response
        public var sequence: UInt64?
        public var notice: AccessNotice?

        init(_ response: Response, sequence: UInt64? = nil, notice: AccessNotice? = nil) {
            self.response = response
            self.sequence = sequence
            self.notice = notice
        }
    }

    /// The answer to a write whose change the log could not record durably. By the time it is given the
    /// change is undone: no reader sees it, and the log does not hold it.
    public static func writeLogFailure(_ error: JournalError, id: ByteBuffer?, into output: inout ByteBuffer) {
        let message = "the change was not made (it is undone, and not on disk): \(error.reason)"
        ResponseEncoder.write(WireError(.unavailable, message), id: id, into: &output)
    }

    /// Writes a snapshot on a background thread and calls `completion` with the answer line.
    public func takeSnapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer) -> Void) {
        if let replicated {
            takeReplicatedSnapshot(of: replicated, id: id, completion: completion)
            return
        }
        guard let durable else { return }
        Self.answerOffTheLoop(id: id, completion: completion) {
            do throws(StorageError) {
                let report = try durable.snapshot()
                return .success(
                    Response.snapshot(
                        file: report.file, sequence: report.sequence, bytes: report.bytes,
                        milliseconds: report.milliseconds, memberships: report.membershipCount
                    )
                )
            } catch {
                // A log that takes no writes is the disk's state, not a server fault: the same code as writes get.
                let code: ErrorCode = if case .writesUnavailable = error { .unavailable } else { .internal }
                return .failure(WireError(code, "the snapshot failed: \(error.message)"))
            }
        }
    }

    /// Runs `work` (which may take seconds: checks go on meanwhile) on a background thread and calls
    /// `completion` with its answer line: the snapshots of both backends.
    static func answerOffTheLoop(
        id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer) -> Void,
        _ work: @escaping @Sendable () -> Result<Response, WireError>
    ) {
        DispatchQueue.global(qos: .utility).async {
            var answer = ByteBuffer()
            switch work() {
            case .success(let response): ResponseEncoder.write(response, id: id, into: &answer)
            case .failure(let error): ResponseEncoder.write(error, id: id, into: &answer)
            }
            completion(answer)
        }
    }

    /// Runs a decoded request against the store, its changes attributed to `access.actor`. `watch`,
    /// `unwatch`, `auth`, `stats`, `reload` and `snapshot` are answered by the connection (`respond(to:access:into:)` says
    /// so) and fail here. Permissions were checked by the decoder.
    public func run(_ request: Request, access: ConnectionAccess = .open) -> Result<Outcome, WireError> {
        let actor = access.actor
        do throws(StoreError) {
            switch request {
            case .ping:
                return .success(Outcome(.pong))
            case .hello:
                let operations = Request.Operation.allCases
                let hello = Response.hello(
                    protocolVersion: protocolVersion, server: "entitled " + EntitledServer.version, operations: operations,
                    authRequired: access.authenticationRequired
                )
                return .success(Outcome(hello))
            case .check(let query):
                return .success(Outcome(.access(try store.check(query))))
            case .grant(let grant, let reason):
                let recorded = try store.grant(grant, by: ChangeAuthor(actor: actor, reason: reason), transfers: transferRule)
                let membership = recorded.value
                guard !recorded.isReplay else {
                    return .success(Outcome(.replayedGrant(membership, moment: store.now()), sequence: recorded.sequence))
                }
                if let previous = recorded.transferredFrom {
                    let notice =
                        watchHub.hasWatchers
                        ? AccessNotice(cause: "transfer", memberships: [membership], sequence: recorded.sequence, formerOwner: previous) : nil
                    let response = Response.transferredGrant(membership, moment: store.now(), from: previous)
                    return .success(Outcome(response, sequence: recorded.sequence, notice: notice))
                }
                let notice = watchHub.hasWatchers ? AccessNotice(cause: "grant", memberships: [membership], sequence: recorded.sequence) : nil
                return .success(Outcome(.membership(membership, moment: membership.createdAt), sequence: recorded.sequence, notice: notice))
            case .claim(let device, let user, let reason):
                let recorded = try store.claimMemberships(device: device, user: user, by: ChangeAuthor(actor: actor, reason: reason))
                let notice = recorded.value.isEmpty || !watchHub.hasWatchers ? nil : AccessNotice(cause: "claim", memberships: recorded.value, sequence: recorded.sequence)
                return .success(Outcome(.claimed(recorded.value.count), sequence: recorded.sequence, notice: notice))
            case .revoke(let id, let reason):
                let recorded = try store.revoke(id, reason: reason, actor: actor)
                let notice = !recorded.isReplay && watchHub.hasWatchers ? AccessNotice(cause: "revoke", memberships: [recorded.value], sequence: recorded.sequence) : nil
                return .success(Outcome(.membership(recorded.value, moment: store.now()), sequence: recorded.sequence, notice: notice))
            case .memberships(.transaction(let id), _):
                return .success(Outcome(.memberships(store.memberships(withTransactionID: id), moment: store.now())))
            case .memberships(.originalTransaction(let id), _):
                return .success(Outcome(.memberships(store.memberships(withOriginalTransactionID: id), moment: store.now())))
            case .memberships(.visible(let subject), let moment):
                // A moment in the past lists the memberships as they were then, as `check` sees them.
                let now = store.now()
                if let moment, moment < now {
                    return .success(Outcome(.memberships(store.memberships(visibleTo: subject, asOf: moment), moment: moment)))
                }
                return .success(Outcome(.memberships(store.memberships(visibleTo: subject), moment: moment ?? now)))
            case .define(let entitlement, let products, let reason):
                let recorded = try store.define(entitlement: entitlement, products: products, by: ChangeAuthor(actor: actor, reason: reason))
                return .success(Outcome(.defined(entitlement: entitlement, products: recorded.value), sequence: recorded.sequence))
            case .catalog:
                return .success(Outcome(.catalog(store.catalog())))
            case .event(let id, let event, let reason):
                let recorded = try store.apply(event, to: id, by: ChangeAuthor(actor: actor, reason: reason))
                let (membership, outcome) = recorded.value
                let notice = outcome.isApplied && watchHub.hasWatchers ? AccessNotice(cause: event.kind.name, memberships: [membership], sequence: recorded.sequence) : nil
                let response = Response.event(membership, moment: store.now(), outcome: outcome)
                return .success(Outcome(response, sequence: recorded.sequence, notice: notice))
            case .customer(let subject):
                return .success(Outcome(.customer(store.customerInfo(of: subject))))
            case .history(.subject(let subject), let limit):
                return .success(Outcome(.history(store.history(of: subject, limit: limit))))
            case .history(.entitlement(let entitlement), let limit):
                return .success(Outcome(.history(store.history(ofEntitlement: entitlement, limit: limit))))
            case .history(.erasures, let limit):
                let entries = store.erasures(limit: limit).map {
                    AuditEntry(sequence: $0.sequence, context: $0.context, change: .erasure(memberships: $0.memberships, historyEntries: $0.historyEntries))
                }
                return .success(Outcome(.history(entries)))
            case .undefine(let entitlement, let reason):
                let recorded = try store.undefine(entitlement: entitlement, by: ChangeAuthor(actor: actor, reason: reason))
                return .success(Outcome(.undefined(entitlement: entitlement, products: recorded.value), sequence: recorded.sequence))
            case .erase(let subject, let reason):
                let recorded = try store.erase(subject, by: ChangeAuthor(actor: actor, reason: reason))
                let erasure = recorded.value
                var notice: AccessNotice?
                if watchHub.hasWatchers, !erasure.memberships.isEmpty {
                    // Watchers of the person are told their access ended: each membership as revoked, the
                    // last time anything says it existed.
                    let now = store.now()
                    let ended = erasure.memberships.map { membership in
                        var ended = membership
                        if ended.revocation == nil { ended.revocation = Revocation(revokedAt: now, reason: "erased") }
                        return ended
                    }
                    notice = AccessNotice(cause: "erase", memberships: ended, sequence: recorded.sequence)
                }
                let response = Response.erased(memberships: erasure.memberships.count, historyEntries: erasure.historyEntries)
                return .success(Outcome(response, sequence: recorded.sequence, notice: notice))
            case .snapshot, .watch, .unwatch, .auth, .stats, .reload:
                return .failure(WireError(.internal, "\(request.op.rawValue) is answered by the connection, not run on the store"))
            }
        } catch {
            return .failure(Self.wireError(error))
        }
    }

    /// The answer to a request the store refused.
    static func wireError(_ error: StoreError) -> WireError {
        let code: ErrorCode
        switch error.code {
        case .notFound: code = .notFound
        case .conflict: code = .conflict
        case .invalid: code = .badRequest
        case .internal: code = .internal
        case .unavailable: code = .unavailable
        }
        return WireError(code, error.message)
    }
}
