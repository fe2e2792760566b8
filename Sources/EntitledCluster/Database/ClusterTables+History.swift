/// Schema version 3: a history that a node can tell from another, and changes served only once durable.
///
/// A failover of PostgreSQL to a standby that had not received the newest commits cuts the database's
/// history short, and the nodes' replicas may hold changes it no longer has. Version 2 could not see it: a
/// node went on at its own newest number, and the next commit numbered a new change with a number already
/// given to a lost one. Version 3 anchors the history (Protocol/CLUSTER.md, "After a failover"):
///
/// - Each change names the group (transaction) of the change before it (`changes.prev_group`), `head` the
///   group of the newest change, a snapshot the group of its change. A node remembers the group of the
///   newest change it applied: what it reads or commits must continue exactly that, or the database's
///   history is not the one it applied. (Group ids are random 63-bit numbers: another history has another.)
/// - `mark_history` starts a new range of numbers after a failover (a new timeline or system identifier, or
///   a node that applied more than the database holds): the numbering resumes beyond every number given
///   before, and a *mark* row (format 0) says from which change it resumes, so no number names two changes.
/// - `read_changes` confirms what a node is about to apply as durable under the database's own settings.
extension ClusterTables {
    /// The format of a mark row in `changes`: no change, the numbering resumes here. Its record holds the
    /// number of the change it follows (8 bytes, big-endian: PostgreSQL's `int8send`).
    static let markFormat: UInt32 = 0

    /// How far apart the ranges of numbers of two histories start: a mark resumes at a multiple of this at
    /// least this far beyond the newest number known. Every number a history lost is below it unless that
    /// history gave a billion numbers that its standby never received.
    static let markStride: Int64 = 1_000_000_000

    static func version3(schema s: String) -> [String] {
        [
            "ALTER TABLE \(s).head ADD COLUMN group_id bigint NOT NULL DEFAULT 0",
            "ALTER TABLE \(s).changes ADD COLUMN prev_group bigint NOT NULL DEFAULT 0",
            "ALTER TABLE \(s).snapshots ADD COLUMN group_id bigint NOT NULL DEFAULT 0",
            // Anchors for what version 2 left: a snapshot's is its change's group (minus its number when that row
            // went, which no other history has), each change's the group of the change or snapshot before it.
            "UPDATE \(s).snapshots AS n SET group_id = coalesce((SELECT c.group_id FROM \(s).changes AS c WHERE c.seq = n.seq), -n.seq)",
            """
            UPDATE \(s).changes AS c SET prev_group = coalesce(
                (SELECT p.group_id FROM \(s).changes AS p WHERE p.seq = c.seq - 1),
                (SELECT n.group_id FROM \(s).snapshots AS n WHERE n.seq = c.seq - 1), 0)
            """,
            """
            UPDATE \(s).head AS h SET group_id = coalesce(
                (SELECT c.group_id FROM \(s).changes AS c WHERE c.seq = h.seq),
                (SELECT n.group_id FROM \(s).snapshots AS n WHERE n.seq = h.seq), 0)
            """,
            // The database the history was last written on: its system identifier and timeline (`mark_history`).
            "INSERT INTO \(s).meta (key, value) VALUES ('database', '')",
            // One row a node: the write whose synchronous commit confirms what the node read (`read_changes`).
            "CREATE TABLE \(s).durability (node text PRIMARY KEY, confirmed_at timestamptz NOT NULL)",
            "DROP PROCEDURE \(s).commit_group",
            commitGroupProcedure(schema: s),
            readChangesProcedure(schema: s),
            markHistoryProcedure(schema: s),
        ]
    }

    /// The write that makes a synchronous standby confirm everything committed before it, when the database
    /// has one (`synchronous_standby_names`): its commit waits for the standby as the database's settings
    /// say (`synchronous_commit`), and the standby confirms the log in order. `who` names the node.
    private static func confirmation(schema s: String, who: String) -> String {
        """
        IF current_setting('synchronous_standby_names') <> '' THEN
            INSERT INTO \(s).durability AS d (node, confirmed_at) VALUES (\(who), now())
                ON CONFLICT ON CONSTRAINT durability_pkey DO UPDATE SET confirmed_at = now();
            COMMIT;
        END IF;
        """
    }

    /// Version 2's procedure, and: the group names the group of the replica's newest change
    /// (`expected_group`), and is refused `diverged` when the database's history does not continue it; each
    /// stored change names the group before it; the changes a refused (`conflict`) group's node must apply
    /// first are confirmed durable before they are returned.
    private static func commitGroupProcedure(schema s: String) -> String {
        """
        CREATE PROCEDURE \(s).commit_group(
            expected bigint, expected_group bigint, node text, gid bigint, keys bigint[], exclusive boolean,
            format integer, records bytea[], channel text, most integer,
            INOUT outcome text DEFAULT NULL, INOUT first bigint DEFAULT NULL, INOUT newest_group bigint DEFAULT NULL,
            INOUT seqs bigint[] DEFAULT NULL, INOUT formats integer[] DEFAULT NULL, INOUT groups bigint[] DEFAULT NULL,
            INOUT prevs bigint[] DEFAULT NULL, INOUT bodies bytea[] DEFAULT NULL)
        LANGUAGE plpgsql AS $body$
        DECLARE
            newest bigint;
            n integer := cardinality(records);
            oldest bigint;
            overlap boolean;
        BEGIN
            SELECT h.seq, h.group_id INTO newest, newest_group FROM \(s).head AS h FOR UPDATE;
            -- The database holds less than the node applied, or another change at its newest number: a
            -- failover lost changes the node applied. Nothing is written; the node reloads.
            IF newest < expected OR (newest = expected AND newest_group <> expected_group) THEN
                outcome := 'diverged';
                first := newest + 1;
                RETURN;
            END IF;
            IF newest > expected THEN
                -- Aggregated in the order of the subquery: an ORDER BY in each aggregate sorted five times.
                SELECT array_agg(c.seq), array_agg(c.format), array_agg(c.group_id), array_agg(c.prev_group), array_agg(c.record)
                INTO seqs, formats, groups, prevs, bodies
                FROM (SELECT x.seq, x.format, x.group_id, x.prev_group, x.record FROM \(s).changes AS x
                      WHERE x.seq > expected AND x.seq <= newest ORDER BY x.seq LIMIT most) AS c;
                SELECT min(g.first_seq), coalesce(bool_or(g.exclusive OR commit_group.exclusive OR g.keys && commit_group.keys), false)
                INTO oldest, overlap
                -- Bounded above too: a generic plan of an open range scanned the whole table (version 2).
                FROM \(s).groups AS g WHERE g.last_seq > expected AND g.last_seq <= newest;
                IF coalesce(cardinality(seqs), 0) < newest - expected OR coalesce(oldest, newest + 1) > expected + 1 OR overlap THEN
                    outcome := 'conflict';
                    first := newest + 1;
                    IF seqs IS NOT NULL THEN
                        \(confirmation(schema: s, who: "commit_group.node"))
                    END IF;
                    RETURN;
                END IF;
                -- Every change since the node's newest is here: the first must follow the node's newest.
                IF prevs[1] <> expected_group THEN
                    outcome := 'diverged';
                    first := newest + 1;
                    RETURN;
                END IF;
            END IF;
            INSERT INTO \(s).changes (seq, format, node, group_id, prev_group, record)
                SELECT newest + i, format, node, gid, CASE WHEN i = 1 THEN newest_group ELSE gid END, records[i]
                FROM generate_subscripts(records, 1) AS i;
            INSERT INTO \(s).groups (last_seq, first_seq, group_id, node, keys, exclusive)
                VALUES (newest + n, newest + 1, gid, node, keys, exclusive);
            UPDATE \(s).head SET seq = newest + n, group_id = gid;
            COMMIT;
            -- Announced after the commit, in a transaction of its own that writes nothing: the lock is free
            -- by then, and the notification, only a wake-up, goes out once the changes are visible.
            PERFORM pg_notify(channel, (newest + n)::text);
            outcome := 'committed';
            first := newest + 1;
        END
        $body$
        """
    }

    /// The newest change (number and group) and up to `most` changes after `after`, in order, read in one
    /// statement; then, with a synchronous standby, confirmed durable before the call answers.
    ///
    /// Why the confirmation: a commit waiting for its synchronous standby is invisible to other sessions,
    /// but becomes visible on the primary alone when its wait is cancelled (its session terminated, a
    /// node's own `pg_terminate_backend` to learn a group's fate among them, or the primary restarted), and
    /// a failover then loses it. The confirming commit comes after every commit this read saw, and the
    /// standby confirms the log in order: once it answers, all of them are on the standby.
    private static func readChangesProcedure(schema s: String) -> String {
        """
        CREATE PROCEDURE \(s).read_changes(
            after bigint, most integer, reader text,
            INOUT newest bigint DEFAULT NULL, INOUT newest_group bigint DEFAULT NULL,
            INOUT seqs bigint[] DEFAULT NULL, INOUT formats integer[] DEFAULT NULL, INOUT groups bigint[] DEFAULT NULL,
            INOUT prevs bigint[] DEFAULT NULL, INOUT bodies bytea[] DEFAULT NULL)
        LANGUAGE plpgsql AS $body$
        BEGIN
            SELECT h.seq, h.group_id, c.seqs, c.formats, c.groups, c.prevs, c.bodies
            INTO newest, newest_group, seqs, formats, groups, prevs, bodies
            FROM \(s).head AS h, LATERAL (
                SELECT array_agg(x.seq) AS seqs, array_agg(x.format) AS formats, array_agg(x.group_id) AS groups,
                       array_agg(x.prev_group) AS prevs, array_agg(x.record) AS bodies
                FROM (SELECT y.seq, y.format, y.group_id, y.prev_group, y.record FROM \(s).changes AS y
                      WHERE y.seq > after ORDER BY y.seq LIMIT most) AS x) AS c;
            IF seqs IS NOT NULL THEN
                \(confirmation(schema: s, who: "reader"))
            END IF;
        END
        $body$
        """
    }

    /// Called by every node on every connection before anything else, and by a node that found the
    /// database's history is not the one it applied: notes the database's identity (system identifier and
    /// timeline; `seen`, or NULL where the role may not read them) and, when it changed since the history
    /// was last written (a failover, a restore) or the newest change is below `beyond` (the node applied
    /// more than the database holds), starts a new range of numbers with a mark. `outcome` is `marked`,
    /// `recorded` (the identity noted for the first time) or `unchanged`; `previous` the change the mark
    /// follows (the newest before); `known` the identity the history was last written on.
    private static func markHistoryProcedure(schema s: String) -> String {
        """
        CREATE PROCEDURE \(s).mark_history(
            writer text, gid bigint, beyond bigint, channel text,
            INOUT outcome text DEFAULT NULL, INOUT newest bigint DEFAULT NULL, INOUT previous bigint DEFAULT NULL,
            INOUT seen text DEFAULT NULL, INOUT known text DEFAULT NULL)
        LANGUAGE plpgsql AS $body$
        DECLARE
            newest_group bigint;
        BEGIN
            -- pg_current_wal_lsn() fails on a standby ("recovery is in progress"): a node never writes to one.
            BEGIN
                seen := (SELECT system_identifier::text FROM pg_control_system()) || '/'
                    || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8);
            EXCEPTION WHEN insufficient_privilege THEN
                seen := NULL;
            END;
            SELECT h.seq, h.group_id INTO previous, newest_group FROM \(s).head AS h FOR UPDATE;
            SELECT m.value INTO known FROM \(s).meta AS m WHERE m.key = 'database';
            newest := previous;
            IF previous < beyond OR (seen IS NOT NULL AND known <> '' AND known <> seen) THEN
                newest := (greatest(previous, beyond) / \(markStride) + 2) * \(markStride);
                INSERT INTO \(s).changes (seq, format, node, group_id, prev_group, record)
                    VALUES (newest, \(markFormat), writer, gid, newest_group, int8send(previous));
                INSERT INTO \(s).groups (last_seq, first_seq, group_id, node, keys, exclusive)
                    VALUES (newest, previous + 1, gid, writer, '{}', true);
                UPDATE \(s).head SET seq = newest, group_id = gid;
                IF seen IS NOT NULL THEN
                    UPDATE \(s).meta SET value = seen WHERE key = 'database';
                END IF;
                COMMIT;
                PERFORM pg_notify(channel, newest::text);
                outcome := 'marked';
            ELSIF seen IS NOT NULL AND known = '' THEN
                UPDATE \(s).meta SET value = seen WHERE key = 'database';
                COMMIT;
                outcome := 'recorded';
            ELSE
                outcome := 'unchanged';
            END IF;
        END
        $body$
        """
    }
}
