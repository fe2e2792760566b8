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

    public init(store: EntitlementStore) {
        self.store = store
        self.durable = nil
    }

    public init(durable: DurableStore) {
        self.store = durable.store
        self.durable = durable
    }

    /// What became of a request's answer.
    public enum Answer: Sendable {
        /// The answer was appended to the output.
        case written
        /// The request changed the store; `success` is its answer once the log acknowledges change
        /// `sequence`. If the log fails instead, the answer is an `internal` error with `id`.
        case afterLog(sequence: UInt64, success: ByteBuffer, id: ByteBuffer?)
        /// A snapshot was asked for: run `takeSnapshot(id:completion:)` and answer with what it gives.
        case afterSnapshot(id: ByteBuffer?)
    }

    /// Answers one request line: appends its answer to `output`, or says how it will be answered.
    @discardableResult
    public func respond(to line: ByteBuffer, into output: inout ByteBuffer) -> Answer {
        let decoded = RequestDecoder.decode(line: line)
        let request: Request
        switch decoded.result {
        case .success(let decodedRequest): request = decodedRequest
        case .failure(let error):
            ResponseEncoder.write(error, id: decoded.id, into: &output)
            return .written
        }
        if case .snapshot = request {
            guard durable != nil else {
                let error = WireError(.internal, "this server keeps no data directory, so it cannot write a snapshot")
                ResponseEncoder.write(error, id: decoded.id, into: &output)
                return .written
            }
            return .afterSnapshot(id: decoded.id)
        }
        switch run(request) {
        case .failure(let error):
            ResponseEncoder.write(error, id: decoded.id, into: &output)
            return .written
        case .success(let (response, sequence)):
            guard let sequence, let log = durable?.log, sequence > log.acknowledgedSequence else {
                ResponseEncoder.write(response, id: decoded.id, into: &output)
                return .written
            }
            // Room for a membership answer from the start: growing an empty buffer reallocated it twice.
            var success = ByteBufferAllocator().buffer(capacity: 512)
            ResponseEncoder.write(response, id: decoded.id, into: &success)
            return .afterLog(sequence: sequence, success: success, id: decoded.id)
        }
    }

    /// The answer to a write whose change the log could not record durably.
    public static func writeLogFailure(_ error: JournalError, id: ByteBuffer?, into output: inout ByteBuffer) {
        let message = "the change may not be on disk: \(error.reason); the server takes no more changes, reads go on"
        ResponseEncoder.write(WireError(.internal, message), id: id, into: &output)
    }

    /// Writes a snapshot on a background thread and calls `completion` with the answer line.
    public func takeSnapshot(id: ByteBuffer?, completion: @escaping @Sendable (ByteBuffer) -> Void) {
        guard let durable else { return }
        DispatchQueue.global(qos: .utility).async {
            var answer = ByteBuffer()
            do throws(StorageError) {
                let report = try durable.snapshot()
                let response = Response.snapshot(
                    file: report.file, sequence: report.sequence, bytes: report.bytes,
                    milliseconds: report.milliseconds, memberships: report.membershipCount
                )
                ResponseEncoder.write(response, id: id, into: &answer)
            } catch {
                ResponseEncoder.write(WireError(.internal, "the snapshot failed: \(error.message)"), id: id, into: &answer)
            }
            completion(answer)
        }
    }

    /// Runs a decoded request against the store. Writes also return the number of the last change their
    /// answer reflects, which must be durable before the answer is sent.
    public func run(_ request: Request) -> Result<(Response, sequence: UInt64?), WireError> {
        do throws(StoreError) {
            switch request {
            case .ping:
                return .success((.pong, nil))
            case .check(let query):
                return .success((.access(try store.check(query)), nil))
            case .grant(let grant):
                let recorded = try store.grant(grant)
                return .success((.membership(recorded.value, moment: recorded.value.createdAt), recorded.sequence))
            case .claim(let device, let user):
                let recorded = try store.claim(device: device, user: user)
                return .success((.claimed(recorded.value), recorded.sequence))
            case .revoke(let id, let reason):
                let recorded = try store.revoke(id, reason: reason)
                return .success((.membership(recorded.value, moment: store.now()), recorded.sequence))
            case .memberships(let subject, let moment):
                let memberships = store.memberships(visibleTo: subject)
                return .success((.memberships(memberships, moment: moment ?? store.now()), nil))
            case .define(let entitlement, let products):
                let recorded = try store.define(entitlement: entitlement, products: products)
                return .success((.defined(entitlement: entitlement, products: recorded.value), recorded.sequence))
            case .catalog:
                return .success((.catalog(store.catalog()), nil))
            case .snapshot:
                return .failure(WireError(.internal, "a snapshot is answered asynchronously"))
            }
        } catch {
            let code: ErrorCode
            switch error.code {
            case .notFound: code = .notFound
            case .internal: code = .internal
            }
            return .failure(WireError(code, error.message))
        }
    }
}
