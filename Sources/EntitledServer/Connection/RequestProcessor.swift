import EntitledCore
import EntitledWire
import NIOCore

/// Answers request lines from the store: decode, run, encode. No I/O and no thread hop, so the connection
/// handler can call it inline on its event loop.
public struct RequestProcessor: Sendable {
    public let store: EntitlementStore

    public init(store: EntitlementStore) {
        self.store = store
    }

    /// Answers one request line by appending exactly one response line to `output`.
    public func respond(to line: ByteBuffer, into output: inout ByteBuffer) {
        let decoded = RequestDecoder.decode(line: line)
        switch decoded.result {
        case .success(let request):
            switch run(request) {
            case .success(let response): ResponseEncoder.write(response, id: decoded.id, into: &output)
            case .failure(let error): ResponseEncoder.write(error, id: decoded.id, into: &output)
            }
        case .failure(let error):
            ResponseEncoder.write(error, id: decoded.id, into: &output)
        }
    }

    /// Runs a decoded request against the store.
    public func run(_ request: Request) -> Result<Response, WireError> {
        do throws(StoreError) {
            switch request {
            case .ping:
                return .success(.pong)
            case .check(let query):
                return .success(.access(try store.check(query)))
            case .grant(let grant):
                let membership = store.grant(grant)
                return .success(.membership(membership, moment: membership.createdAt))
            case .claim(let device, let user):
                return .success(.claimed(store.claim(device: device, user: user)))
            case .revoke(let id, let reason):
                let membership = try store.revoke(id, reason: reason)
                return .success(.membership(membership, moment: store.now()))
            case .memberships(let subject, let moment):
                let memberships = store.memberships(visibleTo: subject)
                return .success(.memberships(memberships, moment: moment ?? store.now()))
            case .define(let entitlement, let products):
                let stored = store.define(entitlement: entitlement, products: products)
                return .success(.defined(entitlement: entitlement, products: stored))
            case .catalog:
                return .success(.catalog(store.catalog()))
            }
        } catch {
            let code: ErrorCode
            switch error.code {
            case .notFound: code = .notFound
            }
            return .failure(WireError(code, error.message))
        }
    }
}
