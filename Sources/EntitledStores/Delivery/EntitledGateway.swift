import EntitledClient

/// Where a receiver sends its protocol requests: an `entitled` server. A failure to reach it, or a server
/// that cannot take writes now (`unavailable`), is `EntitledUnavailable`; every other answer, error
/// answers included, is returned for the caller to read.
public protocol EntitledGateway: Sendable {
    func send(_ request: EntitledRequest) async throws(EntitledUnavailable) -> EntitledResponse
}

/// The gateway over an `EntitledPool`: reconnects by itself, with a backoff.
public struct PoolGateway: EntitledGateway {
    public let pool: EntitledPool

    public init(pool: EntitledPool) {
        self.pool = pool
    }

    public func send(_ request: EntitledRequest) async throws(EntitledUnavailable) -> EntitledResponse {
        let response: EntitledResponse
        do {
            response = try await pool.send(request)
        } catch {
            throw EntitledUnavailable("entitled at \(pool.address) did not answer: \(error.message)")
        }
        if let failure = response.error {
            switch failure.code {
            case .unavailable, .busy:
                throw EntitledUnavailable("entitled cannot take writes now: \(failure.message)")
            case .unauthorized, .forbidden:
                // The receiver's token is missing, wrong or of a role that may not write: a configuration to
                // fix, after which the store's redelivery applies the notification.
                throw EntitledUnavailable("entitled refused this receiver's token: \(failure.message); give --token-file a token of the writer role")
            default:
                break
            }
        }
        return response
    }
}
