/// Why cluster mode could not start or go on, with a stable code and a message that names what to fix.
public enum ClusterError: Error, Sendable, Equatable {
    /// `--postgres` is not a URL this server understands.
    case badURL(String)
    /// The database could not be reached, or refused the connection (wrong password, no such database).
    case connection(String)
    /// The database refused an operation the schema needs (the role lacks a privilege).
    case permission(String)
    /// The database's schema was made by a newer `entitled`.
    case schemaTooNew(found: Int, known: Int)
    /// What the database holds cannot be read (a change or snapshot fails its checks, a change is missing).
    case corrupt(String)
    /// The database's history is not the one this node's replica applied (a failover lost changes).
    case diverged(String)
    /// A migration target is not empty.
    case notEmpty(String)
    /// Any other database failure, or a deadline passed.
    case database(String)

    public var code: String {
        switch self {
        case .badURL: return "bad_postgres_url"
        case .connection: return "postgres_unreachable"
        case .permission: return "postgres_permission"
        case .schemaTooNew: return "postgres_schema_too_new"
        case .corrupt: return "postgres_corrupt"
        case .diverged: return "postgres_history_diverged"
        case .notEmpty: return "postgres_not_empty"
        case .database: return "postgres_error"
        }
    }

    public var message: String {
        switch self {
        case .badURL(let message), .connection(let message), .permission(let message), .corrupt(let message),
            .diverged(let message), .notEmpty(let message), .database(let message):
            return message
        case .schemaTooNew(let found, let known):
            return "the database's entitled schema is version \(found), made by a newer entitled; this server knows versions up to \(known): upgrade entitled on this node"
        }
    }
}

extension ClusterError: CustomStringConvertible {
    public var description: String { message }
}
