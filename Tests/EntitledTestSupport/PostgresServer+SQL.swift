import Foundation

/// SQL for tests: databases, limited roles, and `psql` for assertions on what a node wrote.
extension PostgresServer {
    /// Runs `sql` through psql as the superuser, on the Unix socket, and returns its output: unaligned,
    /// tuples only (`-A -t`), one row a line, columns separated by `|`, without the trailing newline.
    /// - Throws: `psqlFailed` with psql's message when a statement fails (`ON_ERROR_STOP`).
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") throws -> String {
        guard isRunning else { throw PostgresServerError.notRunning }
        return try runPSQL(sql, connection: ["-h", socketDirectory, "-p", String(port), "-U", Self.superuser, "-d", database])
    }

    /// Runs `sql` through psql connected to `url` (TCP with a password, as a node connects), for tests of
    /// what a given role may do and of refused passwords.
    @discardableResult
    public func psql(_ sql: String, url: String) throws -> String {
        try runPSQL(sql, connection: ["-d", url])
    }

    /// Creates an empty database, owned by the superuser.
    public func createDatabase(_ name: String) throws {
        try psql("CREATE DATABASE \(Self.identifier(name))")
    }

    /// Creates a login role that owns one schema (`schema`, in `database`) and nothing else: it may connect
    /// to the database and create objects in its schema only, not in `public` nor new schemas nor
    /// databases. Its `search_path` in that database is its schema, so unqualified names land there.
    /// The "works with a role that owns only its own schema" requirement of issue 21.
    public func createRole(_ name: String, password: String, owningSchema schema: String = "entitled", in database: String) throws {
        let role = Self.identifier(name)
        try psql(
            """
            CREATE ROLE \(role) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD \(Self.literal(password));
            GRANT CONNECT ON DATABASE \(Self.identifier(database)) TO \(role);
            REVOKE CREATE ON DATABASE \(Self.identifier(database)) FROM PUBLIC;
            ALTER ROLE \(role) IN DATABASE \(Self.identifier(database)) SET search_path = \(Self.identifier(schema));
            """
        )
        // Since PostgreSQL 15 nobody but the database's owner may create in `public`; said again for 14.
        try psql(
            """
            REVOKE CREATE ON SCHEMA public FROM PUBLIC;
            CREATE SCHEMA \(Self.identifier(schema)) AUTHORIZATION \(role);
            """,
            database: database
        )
    }

    /// `name` as a quoted SQL identifier.
    public static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` as a quoted SQL string literal.
    public static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    private func runPSQL(_ sql: String, connection: [String]) throws -> String {
        // As this process's user: root may use the socket directory; the password, when any, is in the URL,
        // and `-w` never prompts for one (a test has no terminal to answer).
        let result = try installation.run(
            installation.psql, ["-X", "-w", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"] + connection + ["-c", sql], asServerUser: false,
            workingDirectory: directory
        )
        guard result.status == 0 else {
            throw PostgresServerError.psqlFailed(sql: sql, status: result.status, output: result.output)
        }
        var output = result.output
        if output.hasSuffix("\n") { output.removeLast() }
        return output
    }
}
