import PostgresNIO

extension ClusterTables {
    /// The schema version this server creates and understands.
    static let schemaVersion = 3

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
            // Version 2: a group commits in one round trip (`commit_group`), its writes checked, under the
            // lock, against the footprints of the groups committed since its node decided it.
            [
                """
                CREATE TABLE \(schema).groups (
                    last_seq bigint PRIMARY KEY,
                    first_seq bigint NOT NULL,
                    group_id bigint NOT NULL,
                    node text NOT NULL,
                    keys bigint[] NOT NULL,
                    exclusive boolean NOT NULL,
                    committed_at timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX ON \(schema).groups (group_id)",
                // A row's record no longer repeats its change number (the procedure numbers a group's changes
                // as it stores them): the first 8 bytes of the records of version 1 go.
                "UPDATE \(schema).changes SET record = substring(record from 9)",
                """
                CREATE PROCEDURE \(schema).commit_group(
                    expected bigint, node text, gid bigint, keys bigint[], exclusive boolean, format integer,
                    records bytea[], channel text, most integer,
                    INOUT outcome text DEFAULT NULL, INOUT first bigint DEFAULT NULL,
                    INOUT seqs bigint[] DEFAULT NULL, INOUT formats integer[] DEFAULT NULL,
                    INOUT groups bigint[] DEFAULT NULL, INOUT bodies bytea[] DEFAULT NULL)
                LANGUAGE plpgsql AS $body$
                DECLARE
                    newest bigint;
                    n integer := cardinality(records);
                    oldest bigint;
                    overlap boolean;
                BEGIN
                    SELECT h.seq INTO newest FROM \(schema).head AS h FOR UPDATE;
                    IF newest > expected THEN
                        -- Aggregated in the order of the subquery: an ORDER BY in each aggregate sorted four
                        -- times, half of the call's time (measured).
                        SELECT array_agg(c.seq), array_agg(c.format), array_agg(c.group_id), array_agg(c.record)
                        INTO seqs, formats, groups, bodies
                        FROM (SELECT x.seq, x.format, x.group_id, x.record FROM \(schema).changes AS x
                              WHERE x.seq > expected AND x.seq <= newest ORDER BY x.seq LIMIT most) AS c;
                        SELECT min(g.first_seq), coalesce(bool_or(g.exclusive OR commit_group.exclusive OR g.keys && commit_group.keys), false)
                        INTO oldest, overlap
                        -- Bounded above too: PL/pgSQL soon plans its statements once for any argument (a
                        -- generic plan), and for an open range it guesses a third of the table and scans all
                        -- of it, a cost that grew with the table until the cluster took 4,000 writes/s
                        -- instead of 14,000 (measured); a closed range is read through the index.
                        FROM \(schema).groups AS g WHERE g.last_seq > expected AND g.last_seq <= newest;
                        -- Changes it has not seen or cannot check (removed by a snapshot, not all fetched), or a
                        -- committed group that touched what this one looked at: decided again on the newer state.
                        IF coalesce(cardinality(seqs), 0) < newest - expected OR coalesce(oldest, newest + 1) > expected + 1 OR overlap THEN
                            outcome := 'conflict';
                            first := newest + 1;
                            RETURN;
                        END IF;
                    END IF;
                    INSERT INTO \(schema).changes (seq, format, node, group_id, record)
                        SELECT newest + i, format, node, gid, records[i] FROM generate_subscripts(records, 1) AS i;
                    INSERT INTO \(schema).groups (last_seq, first_seq, group_id, node, keys, exclusive)
                        VALUES (newest + n, newest + 1, gid, node, keys, exclusive);
                    UPDATE \(schema).head SET seq = newest + n;
                    COMMIT;
                    -- Announced after the commit, in a transaction of its own that writes nothing (and so
                    -- waits for no disk): the lock is free by then, and the notification, only a wake-up,
                    -- goes out once the changes are visible.
                    PERFORM pg_notify(channel, (newest + n)::text);
                    outcome := 'committed';
                    first := newest + 1;
                END
                $body$
                """,
            ],
            // Version 3: `ClusterTables+History.swift`.
            version3(schema: schema),
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
