/// Valid requests the fuzzer starts from: every operation, and every field the protocol defines, in at
/// least one of them (`RequestDecoderFuzzTests` proves both, and that each template decodes).
///
/// Key order is kept (`KeyValuePairs`): where a field stands decides which of two problems is reported.
enum RequestTemplates {
    static let all: [KeyValuePairs<String, FuzzValue>] = [
        ["op": "ping", "id": 1],
        ["op": "hello", "id": "h"],
        [
            "op": "grant", "id": 2, "user": "u1", "device": "d1", "product": "prod_pro", "plan": "plan_m",
            "source": "stripe", "duration": "30d", "reason": "bought", "transactionId": "t1",
            "originalTransactionId": "t0", "willRenew": true, "periodType": "trial", "environment": "sandbox",
            "ownership": "family_shared", "grantType": "offer_code", "idempotencyKey": "k1",
        ],
        ["op": "grant", "device": "d1", "product": "prod_pro", "expiresAt": "2027-01-01T00:00:00Z", "id": ["k", 1, nil]],
        [
            "op": "grant", "user": "u1", "product": "prod_pro", "source": "play_store", "purchasedAt": "2024-03-01T10:00:00Z",
            "duration": "1mo", "renewsCount": 23, "transactionId": "GPA.1-2-3..23",
        ],
        ["op": "check", "user": "u1", "device": "d1", "entitlement": "pro", "at": "2026-12-01T00:00:00.5+01:00"],
        ["op": "check", "user": "u1", "product": "prod_pro", "id": "c", "minSeq": 12],
        ["op": "claim", "device": "d1", "user": "u1", "reason": "login"],
        ["op": "revoke", "membership": "mem_0000000000000", "reason": "refund"],
        ["op": "memberships", "user": "u1", "device": "d1", "at": "2026-01-01T00:00:00Z"],
        ["op": "memberships", "user": "u1", "limit": 5, "after": "mem_0k3n5q8r2t4v6"],
        ["op": "memberships", "source": "app_store", "endedAfter": "2026-01-01T00:00:00Z", "limit": 500, "after": "1f.19999.mem_0k3n5q8r2t4v6"],
        ["op": "define", "entitlement": "pro", "products": ["prod_pro", "prod_pro_y"], "reason": "launch"],
        ["op": "catalog"],
        ["op": "stats", "id": 3],
        ["op": "reload", "id": 4],
        ["op": "snapshot", "id": nil],
        [
            "op": "event", "membership": "mem_0k3n5q8r2t4v6", "type": "renewal", "eventId": "e1",
            "eventTime": "2026-01-01T00:00:00Z", "expiresAt": "2026-02-01T00:00:00Z", "transactionId": "t2",
            "reason": "renewed",
        ],
        [
            "op": "event", "membership": "mem_0000000000000", "type": "billing_issue", "eventId": "e2",
            "eventTime": "2026-01-01T00:00:00Z", "gracePeriodExpiresAt": "2026-01-08T00:00:00Z",
        ],
        [
            "op": "event", "membership": "mem_0000000000000", "type": "product_change", "eventId": "e3",
            "eventTime": "2026-01-01T00:00:00Z", "product": "prod_max",
        ],
        ["op": "customer", "user": "u1"],
        ["op": "history", "user": "u1", "limit": 10],
        ["op": "history", "entitlement": "pro", "limit": 1000],
        ["op": "history", "user": "u1", "after": "1764230400123.57.mem_0k3n5q8r2t4v6.0"],
        ["op": "watch", "user": "u1", "device": "d1"],
        ["op": "watch", "all": true],
        ["op": "unwatch", "all": nil],
        ["op": "auth", "token": "secret-token"],
        ["op": "undefine", "entitlement": "pro", "reason": "retired"],
        ["op": "erase", "user": "u1", "device": "d1", "reason": "ticket 9"],
        ["op": "history", "erasures": true, "limit": 5],
        ["op": "changes", "afterSeq": 120, "limit": 50, "wait": 1000],
        ["op": "changes"],
        ["op": "changes", "user": "u1", "device": "d1", "wait": 5],
        ["op": "export", "limit": 500, "history": true],
        ["op": "export", "after": "1f3a.4096"],
        ["op": "extend", "membership": "mem_0000000000000", "duration": "1mo", "reason": "outage"],
        ["op": "extend", "membership": "mem_0000000000000", "expiresAt": "2026-12-24T00:00:00Z"],
    ]

    /// A template as the tree the mutations edit.
    static func members(of template: KeyValuePairs<String, FuzzValue>) -> [FuzzMember] {
        template.map { FuzzMember(key: Array($0.key.utf8), value: $0.value) }
    }
}
