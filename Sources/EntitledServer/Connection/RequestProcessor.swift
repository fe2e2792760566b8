import Dispatch
import EntitledCore
import EntitledStorage
import EntitledWire
import NIOCore

/// Answers request lines from the store: decode, run, encode. Reads and everything that needs no disk
/// are answered inline, with no I/O and no thread hop, so the connection handler calls it on its event
/// loop. A write is handed to the connection, which submits it to the server's `WriteBackend` (the log,
/// or a cluster's system of record): its answer goes once its change is committed.
public struct RequestProcessor: Sendable {
    public let store: EntitlementStore
    /// Where every write goes, and from where its change is published once committed.
    let writes: any WriteBackend
    /// A single server's log, which `writes` is: its answers wait for each loop's end-of-turn commit
    /// (`GroupCommit`). `nil` on a node of a cluster, whose answers wait for nothing of its loops'.
    /// Found from `writes` rather than kept beside it: the processor is copied on every line a connection
    /// answers behind a waiting one, and each reference it holds is one more retain and release there.
    var log: LogWriteBackend? { writes as? LogWriteBackend }
    /// Who is told of committed changes: watchers, and reads waiting for a change (`minSeq`).
    let publication: Publication
    /// The exports held between their pages.
    let exports = ExportSessions()

    /// The newest change no crash can take back: the log's acknowledged one on a server with a data
    /// directory, the newest applied on a node of a cluster (which applies committed changes only) or a
    /// server in memory.
    var durableSequence: UInt64 {
        log?.logProgress.map { min($0.acknowledged, store.sequence) } ?? store.sequence
    }
    /// What a grant does with a purchase another user's membership holds (`--transfer-rule`).
    public var transferRule = TransferRule.transfer
    /// Where changes are announced to the connections that watch them.
    var watchHub: WatchHub { publication.watchHub }
    /// The most users and devices watched at once over all connections (`--max-watches`); a `watch` beyond
    /// is answered `over_limit`.
    public var maximumSubjectWatches: Int {
        get { watchHub.maximumSubjectWatches }
        set { watchHub.maximumSubjectWatches = newValue }
    }
    /// The connections whose `minSeq` read waits for a change.
    var sequenceWaiters: SequenceWaiters { publication.sequenceWaiters }

    /// A store kept in memory only (tests): a write is committed as soon as it is applied.
    public init(store: EntitlementStore) {
        let publication = Publication()
        self.store = store
        self.publication = publication
        self.writes = LogWriteBackend(store: store, durable: nil, publication: publication)
    }

    /// A single server whose store lives in a data directory: a write is answered once the log holds it.
    public init(durable: DurableStore) {
        let publication = Publication()
        self.store = durable.store
        self.publication = publication
        self.writes = LogWriteBackend(store: durable.store, durable: durable, publication: publication)
    }

    /// A node of a cluster: `store` is its replica of `replicated`, which decides, commits and applies
    /// every write, and tells this node's watchers and `minSeq` waiters of every change it applies.
    public init(store: EntitlementStore, replicated: any ReplicatedLog) {
        let publication = Publication()
        self.store = store
        self.publication = publication
        self.writes = ReplicatedWriteBackend(store: store, replicated: replicated, publication: publication)
    }

    /// What became of a request's answer.
    public enum Answer: Sendable {
        /// The answer was appended to the output.
        case written
        /// A write: the connection submits it to the write backend (`WriteBackend.submit`).
        case write(StoreWrite, id: ByteBuffer?)
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
        /// A read of the change feed with `wait`, when the store has no change after `after` yet: the
        /// connection holds it (and every line after it) until the store applies one, then answers the
        /// line again, or answers the empty page once `waitMilliseconds` have passed.
        case afterFeedChange(FeedWait, waitMilliseconds: Int, id: ByteBuffer?)
        /// A request that is not a write, read while this connection's own writes are not yet applied (a
        /// node of a cluster applies a write only once committed): the connection holds it (and every line
        /// after it) until they are, then answers it again, so that it sees them.
        case afterOwnWrites
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
    ///
    /// For tests and tools that answer lines without a connection: a write is submitted here and, with a
    /// backend that applies it at once, its answer is appended without waiting for the log (a cluster
    /// node's is not answered: it comes to a connection).
    @discardableResult
    public func respond(to line: ByteBuffer, access: ConnectionAccess = .open, into output: inout ByteBuffer) -> Answer {
        var note = Note()
        let answer = respond(to: line, access: access, into: &output, noting: &note)
        guard case .write(let write, let id) = answer else { return answer }
        var pending = ByteBuffer()
        _ = writes.submit(WriteRequest(write: write, id: id), into: &output, pending: &pending, delivery: WriteDelivery(connection: nil, token: 0))
        output.writeImmutableBuffer(pending)
        return .written
    }

    /// As `respond(to:access:into:)`, and notes the request's operation and error code in `note`. With
    /// `ownWritesPending` (a cluster node whose connection has writes not yet applied), anything but a
    /// write is held back (`afterOwnWrites`) instead of being answered.
    @inline(__always)
    public func respond(
        to line: ByteBuffer, access: ConnectionAccess, into output: inout ByteBuffer, noting note: inout Note, ownWritesPending: Bool = false
    ) -> Answer {
        if !ownWritesPending, let check = CompactCheckDecoder.decode(line: line, permitting: access.permissions) {
            answerCheck(check.query, id: check.id, into: &output, noting: &note)
            return .written
        }
        if let compact = CompactGrantDecoder.decode(line: line, permitting: access.permissions) {
            note.operation = .grant
            return .write(grantWrite(compact.grant, reason: nil, access: access), id: compact.id)
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
        if let write = storeWrite(for: request, access: access) {
            note.operation = request.op
            return .write(write, id: decoded.id)
        }
        // A read waits for this connection's own writes, so that it sees them.
        if ownWritesPending { return .afterOwnWrites }
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
        if request.readsStore, let reason = publication.withheldReads.reason {
            note.error = .loading
            ResponseEncoder.writeLoading(reason: reason, id: decoded.id, into: &output)
            return .written
        }
        switch request {
        case .snapshot: return .afterSnapshot(id: decoded.id)
        case .changes(let after, _, _, _) where after > store.sequence:
            // A number this server has not reached: a node of a cluster that lags reaches it in a moment
            // (the read waits as one with `minSeq` does); one it never reaches was never given here, or was
            // lost (`stale`): the reader must not skip the changes that take those numbers now.
            return .afterSequence(after, id: decoded.id)
        case .changes(let after, let limit, let wait, let subject) where wait > 0 && after >= store.sequence:
            return .afterFeedChange(FeedWait(after: after, limit: limit, subject: subject), waitMilliseconds: wait, id: decoded.id)
        case .watch(let target): return .watch(.watch(target), id: decoded.id)
        case .unwatch(let target): return .watch(.unwatch(target), id: decoded.id)
        case .auth(let token): return .auth(token: token, id: decoded.id)
        case .stats: return .stats(id: decoded.id)
        case .reload: return .reload(id: decoded.id)
        default: break
        }
        switch read(request, access: access) {
        case .failure(let error):
            note.error = error.code
            ResponseEncoder.write(error, id: decoded.id, into: &output)
        case .success(let response):
            ResponseEncoder.write(response, id: decoded.id, into: &output)
        }
        return .written
    }

    /// The hot path, answered straight from the store's result: no `Response` or `Outcome` to build and
    /// copy (callgrind counted several hundred instructions a check in their copies).
    @inline(__always)
    private func answerCheck(_ query: AccessQuery, id: ByteBuffer?, into output: inout ByteBuffer, noting note: inout Note) {
        note.operation = .check
        if let reason = publication.withheldReads.reason {
            note.error = .loading
            ResponseEncoder.writeLoading(reason: reason, id: id, into: &output)
            return
        }
        do throws(StoreError) {
            ResponseEncoder.write(.access(try store.check(query)), id: id, into: &output)
        } catch {
            let wireError = Self.wireError(error)
            note.error = wireError.code
            ResponseEncoder.write(wireError, id: id, into: &output)
        }
    }

    /// Takes a snapshot off the loop (it may take seconds; checks go on meanwhile) and calls `completion`
    /// with the answer line and its error code, if any.
    public func takeSnapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void) {
        guard writes.snapshot(id: id, completion: completion) else {
            let error = WireError(.internal, "this server keeps no data directory, so it cannot write a snapshot")
            var answer = ByteBuffer()
            ResponseEncoder.write(error, id: id, into: &answer)
            completion(answer, error.code)
            return
        }
    }

    /// Runs `work` (which may take seconds: checks go on meanwhile) on a background thread and calls
    /// `completion` with its answer line and error code: the snapshots of both backends.
    static func answerOffTheLoop(
        id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer, ErrorCode?) -> Void,
        _ work: @escaping @Sendable () -> Result<Response, WireError>
    ) {
        DispatchQueue.global(qos: .utility).async {
            var answer = ByteBuffer()
            switch work() {
            case .success(let response):
                ResponseEncoder.write(response, id: id, into: &answer)
                completion(answer, nil)
            case .failure(let error):
                ResponseEncoder.write(error, id: id, into: &answer)
                completion(answer, error.code)
            }
        }
    }

    /// Answers a request that reads (writes go to the write backend; `watch`, `unwatch`, `auth`, `stats`,
    /// `reload` and `snapshot` are answered by the connection: `respond(to:access:into:)` says so).
    /// Permissions were checked by the decoder.
    func read(_ request: Request, access: ConnectionAccess = .open) -> Result<Response, WireError> {
        do throws(StoreError) {
            switch request {
            case .ping:
                return .success(.pong)
            case .hello:
                let operations = Request.Operation.allCases
                return .success(
                    .hello(
                        protocolVersion: protocolVersion, server: "entitled " + EntitledServer.version, operations: operations,
                        authRequired: access.authenticationRequired
                    )
                )
            case .check(let query):
                return .success(.access(try store.check(query)))
            case .memberships(let selection, let moment, let limit, let after):
                if case .source = selection, access.listingScope != .everySubject {
                    return .failure(WireError(.forbidden, "listing every membership of a source needs the writer or admin role; list a user's, a device's or a transaction's instead"))
                }
                return .success(try memberships(selection, moment: moment, limit: limit, after: after))
            case .catalog:
                return .success(.catalog(store.catalog()))
            case .customer(let subject):
                return .success(.customer(try store.customerInfo(of: subject)))
            case .history(let target, let limit, let after):
                let page: HistoryPage
                switch target {
                case .subject(let subject): page = try store.historyPage(of: subject, after: after, limit: limit)
                case .entitlement(let entitlement): page = store.historyPage(ofEntitlement: entitlement, after: after, limit: limit)
                case .erasures: page = store.erasureHistoryPage(after: after, limit: limit)
                }
                return .success(.history(page.entries, next: page.next))
            case .changes(let after, let limit, _, let subject):
                return .success(.changes(try store.changes(after: after, limit: limit, subject: subject)))
            case .export(let after, let limit, let history):
                return export(after: after, limit: limit, history: history)
            case .grant, .claim, .revoke, .define, .undefine, .event, .erase, .extend, .snapshot, .watch, .unwatch, .auth, .stats,
                .reload:
                return .failure(WireError(.internal, "\(request.op.rawValue) is not answered by a read"))
            }
        } catch {
            return .failure(Self.wireError(error))
        }
    }

    /// A page of the memberships `selection` names.
    private func memberships(_ selection: MembershipSelection, moment: Timestamp?, limit: Int, after: MembershipID?) throws(StoreError) -> Response {
        let now = store.now()
        let page: MembershipPage
        switch selection {
        case .transaction(let id):
            page = try store.membershipsPage(withTransactionID: id, after: after, limit: limit)
        case .originalTransaction(let id):
            page = try store.membershipsPage(withOriginalTransactionID: id, after: after, limit: limit)
        case .source(let source, let endedAfter, let position):
            // A bounded run of slots a page: costs the same in a store of any size (Pages, PROTOCOL.md).
            let sourcePage = try store.membershipsPage(ofSource: source, endedAfter: endedAfter, after: position, limit: limit)
            return .memberships(sourcePage.memberships, moment: now, next: sourcePage.next?.text)
        case .visible(let subject):
            // A moment lists the memberships as they were then, as `check` sees them: before the store's
            // newest change, as they were; from it on, as they are. Decided by the store's changes alone,
            // not by this server's clock, so that nodes of a cluster holding the same changes agree.
            if let moment {
                page = try store.membershipsPage(visibleTo: subject, asOf: moment, after: after, limit: limit)
                return .memberships(page.memberships, moment: moment, next: page.next?.rawValue)
            }
            page = try store.membershipsPage(visibleTo: subject, after: after, limit: limit)
        }
        return .memberships(page.memberships, moment: moment ?? now, next: page.next?.rawValue)
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
        case .overLimit: code = .overLimit
        case .truncated: code = .truncated
        }
        if case .feedTruncated(_, let oldest, _) = error { return WireError(code, error.message, oldestAfterSeq: oldest) }
        return WireError(code, error.message)
    }
}
