import EntitledTestSupport
import Foundation

/// One PostgreSQL server for the cluster tests that do not stop it: started on first use, each test
/// taking a database of its own. Tests that stop or kill the database start their own server.
enum SharedPostgres {
    private static let started: Result<PostgresServer, any Error> = Result { try PostgresServer() }

    static func server() throws -> PostgresServer {
        try started.get()
    }
}
