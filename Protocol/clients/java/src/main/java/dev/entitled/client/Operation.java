package dev.entitled.client;

import java.util.List;

/**
 * Every operation of protocol version 5 (PROTOCOL.md §6), with the fields it takes besides {@code op} and
 * {@code id}, and whether it is a read. A read changes nothing, so the client sends it again on another
 * connection when its connection drops; any other request is never sent twice by the client.
 */
public enum Operation {
    PING("ping", true),
    HELLO("hello", true),
    GRANT("grant", false, "user", "device", "product", "plan", "source", "expiresAt", "duration", "reason",
            "transactionId", "originalTransactionId", "willRenew", "periodType", "environment", "ownership",
            "grantType", "idempotencyKey", "purchasedAt", "renewsCount"),
    CHECK("check", true, "user", "device", "product", "entitlement", "at", "minSeq"),
    CLAIM("claim", false, "user", "device", "reason"),
    REVOKE("revoke", false, "membership", "reason"),
    MEMBERSHIPS("memberships", true, "user", "device", "source", "at", "transactionId", "originalTransactionId",
            "limit", "minSeq", "after", "endedAfter"),
    DEFINE("define", false, "entitlement", "reason", "products"),
    CATALOG("catalog", true),
    SNAPSHOT("snapshot", false),
    EVENT("event", false, "product", "expiresAt", "membership", "reason", "type", "eventId", "eventTime",
            "gracePeriodExpiresAt", "transactionId"),
    CUSTOMER("customer", true, "user", "device", "minSeq"),
    HISTORY("history", true, "user", "device", "entitlement", "limit", "erasures", "after"),
    WATCH("watch", false, "user", "device", "all"),
    UNWATCH("unwatch", false, "user", "device", "all"),
    AUTH("auth", false, "token"),
    STATS("stats", true),
    RELOAD("reload", false),
    UNDEFINE("undefine", false, "entitlement", "reason"),
    ERASE("erase", false, "user", "device", "reason"),
    EXTEND("extend", false, "expiresAt", "duration", "membership", "reason"),
    CHANGES("changes", true, "user", "device", "limit", "afterSeq", "wait"),
    EXPORT("export", true, "limit", "after", "history");

    private final String wireName;
    private final boolean read;
    private final List<String> fields;

    Operation(String wireName, boolean read, String... fields) {
        this.wireName = wireName;
        this.read = read;
        this.fields = List.of(fields);
    }

    /** The {@code op} as sent. */
    public String wireName() {
        return wireName;
    }

    /**
     * Whether it only reads ({@code check}, {@code memberships}, {@code customer}, {@code catalog},
     * {@code history}, {@code hello}, {@code ping}, {@code stats}, {@code changes}, {@code export}): such a
     * request is sent again on another connection, at most once per node, when its connection drops. (An
     * {@code export} page after the first sent to another node is answered {@code not_found}: the copy is
     * held by the node that took it; {@link EntitledExport} keeps every page on one connection.)
     */
    public boolean isRead() {
        return read;
    }

    /** The fields the operation takes besides {@code op} and {@code id}, as {@code hello} lists them. */
    public List<String> fields() {
        return fields;
    }

    /** The operation of this wire name, or {@code null}. */
    public static Operation of(String wireName) {
        for (Operation op : values()) {
            if (op.wireName.equals(wireName)) {
                return op;
            }
        }
        return null;
    }
}
