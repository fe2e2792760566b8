import PostgresNIO

extension ClusterTables {
    /// The schema version this server creates and understands.
    static let schemaVersion = 2

    /// Each version's statements, run in order from the database's version to `schemaVersion`: version
    /// N's are at index N - 1. A new version appends its own; released ones are never edited.
    static func migrations(schema: String) -> [[String]] {
        [
            // Version 1.
            [
                "CREATE TABLE \(schema).meta (key text PRIMARY KEY, value text NOT NULL)",
                """
                CREATE TABLE \(schema).head (
                    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                    seq bigint NOT NULL)
                """,
                "INSERT INTO \(schema).head (seq) VALUES (0)",
                """
                CREATE TABLE \(schema).changes (
                    seq bigint PRIMARY KEY,
                    format integer NOT NULL,
                    node text NOT NULL,
                    group_id bigint NOT NULL,
                    committed_at timestamptz NOT NULL DEFAULT now(),
                    record bytea NOT NULL)
                """,
                """
                CREATE TABLE \(schema).snapshots (
                    seq bigint PRIMARY KEY,
                    node text NOT NULL,
                    taken_at timestamptz NOT NULL DEFAULT now(),
                    memberships bigint NOT NULL,
                    image bytea NOT NULL)
                """,
                "INSERT INTO \(schema).meta (key, value) VALUES ('schema_version', '1')",
            ],
            // Version 2: a group's lock and its catching up in one round trip. The second statement of a
            // VOLATILE function takes a snapshot of its own, so it sees what the lock's previous holder
            // committed while this one waited (a single statement would not: its snapshot predates the wait).
            [
                """
                CREATE FUNCTION \(schema).lock_head(after bigint, most integer)
                RETURNS TABLE (head bigint, xact text, seq bigint, format integer, group_id bigint, record bytea)
                LANGUAGE plpgsql VOLATILE AS $body$
                #variable_conflict use_column
                DECLARE
                    newest bigint;
                    transaction text := pg_current_xact_id()::text;
                BEGIN
                    SELECT h.seq INTO newest FROM \(schema).head AS h FOR UPDATE;
                    RETURN QUERY
                        SELECT newest, transaction, c.seq, c.format, c.group_id, c.record FROM \(schema).changes AS c
                        WHERE c.seq > after AND c.seq <= newest ORDER BY c.seq LIMIT most;
                    IF NOT FOUND THEN
                        RETURN QUERY SELECT newest, transaction, NULL::bigint, NULL::integer, NULL::bigint, NULL::bytea;
                    END IF;
                END
                $body$
                """
            ],
        ]
    }

    /// Creates the schema and its tables, or upgrades them to `schemaVersion`; returns the version found
    /// (0 for a new database). Nodes starting together serialise on an advisory lock.
    /// - Throws: `ClusterError.schemaTooNew` when a newer entitled made the schema; `.permission` when
    ///   the role may not create what is missing.
    @discardableResult
    func migrate(user: String, database: String) async throws(ClusterError) -> Int {
        do {
            try await begin()
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(schema + ".schema")))", logger: logger)
            var schemaExists = false
            for try await exists in try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = \(schema))", logger: logger
            ).decode(Bool.self) {
                schemaExists = exists
            }
            if !schemaExists {
                do {
                    try await run("CREATE SCHEMA \(schema)")
                } catch {
                    let failure = DatabaseFailure(error)
                    guard failure.isPermission else { throw failure }
                    throw ClusterError.permission(
                        "the role \(user) may not create the schema \(schema) in database \(database): create it for the role (CREATE SCHEMA \(schema) AUTHORIZATION \(user)), or name one it owns with ?schema= in --postgres"
                    )
                }
            }
            var found = 0
            var hasMeta = false
            for try await exists in try await connection.query(
                "SELECT to_regclass(\(schema + ".meta")) IS NOT NULL", logger: logger
            ).decode(Bool.self) {
                hasMeta = exists
            }
            if hasMeta {
                for try await value in try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT value FROM \(schema).meta WHERE key = 'schema_version'"), logger: logger
                ).decode(String.self) {
                    found = Int(value) ?? Int.max
                }
            }
            guard found <= Self.schemaVersion else {
                throw ClusterError.schemaTooNew(found: found, known: Self.schemaVersion)
            }
            let steps = Self.migrations(schema: schema)
            for version in (found + 1)..<(Self.schemaVersion + 1) {
                for statement in steps[version - 1] {
                    do {
                        try await run(statement)
                    } catch {
                        let failure = DatabaseFailure(error)
                        guard failure.isPermission else { throw failure }
                        throw ClusterError.permission(
                            "the role \(user) may not create tables in the schema \(schema) (database \(database)): make the role the schema's owner (ALTER SCHEMA \(schema) OWNER TO \(user)); \(failure)"
                        )
                    }
                }
                if version > 1 {
                    try await run("UPDATE \(schema).meta SET value = '\(version)' WHERE key = 'schema_version'")
                }
            }
            try await commit()
            return found
        } catch let error as ClusterError {
            try? await rollback()
            throw error
        } catch {
            try? await rollback()
            throw .database("preparing the schema \(schema) failed: \(DatabaseFailure(error))")
        }
    }

    /// The schema version the database holds, 0 when it has no entitled tables; reads only.
    func schemaVersionFound() async throws -> Int {
        var hasMeta = false
        for try await exists in try await connection.query("SELECT to_regclass(\(schema + ".meta")) IS NOT NULL", logger: logger).decode(Bool.self) {
            hasMeta = exists
        }
        guard hasMeta else { return 0 }
        for try await value in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT value FROM \(schema).meta WHERE key = 'schema_version'"), logger: logger
        ).decode(String.self) {
            return Int(value) ?? Int.max
        }
        return 0
    }
}
