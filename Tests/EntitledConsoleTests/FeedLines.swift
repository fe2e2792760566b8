/// Answers of `changes` and `export` as the server writes them (taken from a real server, times moved to
/// the morning of 2026-11-22 so that `Instants.afterExamples` is an hour later).
enum FeedLines {
    static let membership =
        #"{"id":"mem_7v7p7yq5t1an7","productId":"p1","user":"u1","status":"active","isActive":true,"createdAt":"2026-11-22T11:00:00.000Z","expiresAt":"2026-12-22T11:00:00.000Z","source":"manual","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}"#
    static let claimed =
        #"{"id":"mem_1dk7eberyffy2","productId":"p2","user":"u2","device":"d1","status":"active","isActive":true,"createdAt":"2026-11-22T11:00:01.000Z","expiresAt":null,"source":"manual","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}"#
    static let revoked =
        #"{"id":"mem_6c2z3shxqhpfc","productId":"p1","user":"u3","status":"revoked","isActive":false,"createdAt":"2026-11-22T11:00:02.000Z","expiresAt":null,"source":"manual","revokedAt":"2026-11-22T11:00:03.000Z","reason":"refund","willRenew":false,"periodType":"normal","renewState":"non_renewable","renewsCount":0,"environment":"production","ownership":"purchased","grantType":"purchase"}"#

    /// A page with one item of each kind, with more changes to read at once (`next` 7 below `newest` 9).
    static let page =
        #"{"ok":true,"changes":["#
        + #"{"time":"2026-11-22T11:00:00.000Z","actor":"local","action":"define","sequence":1,"entitlement":"pro","products":["p1","p2"]},"#
        + #"{"time":"2026-11-22T11:00:00.000Z","actor":"local","action":"grant","reason":"welcome","sequence":2,"membership":"# + membership + "},"
        + #"{"time":"2026-11-22T11:00:02.000Z","actor":"billing","action":"transfer","sequence":4,"membership":"# + claimed
        + #","formerOwner":{"user":"u9"}},"#
        + #"{"time":"2026-11-22T11:00:03.000Z","actor":"local","action":"revoke","reason":"refund","sequence":5,"membership":"# + revoked + "},"
        + #"{"time":"2026-11-22T11:00:04.000Z","actor":"local","action":"erase","sequence":6,"erased":{"memberships":2,"historyEntries":3},"erasedMemberships":["mem_63h6dnzs6ymaq","mem_22wejxntar125"],"detachedMemberships":["mem_1dk7eberyffy2"]},"#
        + #"{"time":"2026-11-22T11:00:05.000Z","actor":"local","action":"undefine","sequence":7,"entitlement":"pro","products":["p1","p2"]}"#
        + #"],"next":7,"newest":9,"oldestAfterSeq":0}"#

    /// The page after it: the last change, and then the feed is read up to its newest change.
    static let lastPage =
        #"{"ok":true,"changes":[{"time":"2026-11-22T11:00:06.000Z","actor":"local","action":"grant","sequence":9,"membership":"# + membership
        + #"}],"next":9,"newest":9,"oldestAfterSeq":0}"#

    /// A read after the newest change: nothing, and `next` where it was.
    static let caughtUp = #"{"ok":true,"changes":[],"next":9,"newest":9,"oldestAfterSeq":0}"#

    /// The first page of an export of two pages, with history.
    static let exportFirst =
        #"{"ok":true,"export":{"seq":9,"time":"2026-11-22T11:30:00.000Z"},"entitlements":{"pro":["p1","p2"]},"memberships":["#
        + membership
        + #"],"history":[{"time":"2026-11-22T11:00:00.000Z","actor":"local","action":"define","sequence":1,"entitlement":"pro","products":["p1","p2"]}],"next":"5d67b2c3f67de49a.1"}"#
    /// Its last page (no `next`).
    static let exportLast =
        #"{"ok":true,"export":{"seq":9,"time":"2026-11-22T11:30:00.000Z"},"memberships":["# + claimed + "," + revoked
        + #"],"history":[]}"#
}
