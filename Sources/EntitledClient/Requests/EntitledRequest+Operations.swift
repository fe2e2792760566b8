/// Typed constructors for every operation of the protocol (Protocol/PROTOCOL.md, section 6).
///
/// Names the protocol enumerates (sources, period types, event types, ...) are passed as their protocol
/// strings, so a value a newer server adds can be sent before this library knows it; the server refuses
/// one it does not know with `bad_request`. The lists this library knows are in `EntitledRequest.Names`.
extension EntitledRequest {
    public static let ping = EntitledRequest(op: "ping")
    /// The protocol version, the server's version and the operations it answers.
    public static let hello = EntitledRequest(op: "hello")
    public static let catalog = EntitledRequest(op: "catalog")
    public static let snapshot = EntitledRequest(op: "snapshot")
    /// Has the server re-read its auth file (`--auth`), as SIGHUP does; answers `tokens`, how many it holds
    /// now. Admin only.
    public static let reload = EntitledRequest(op: "reload")

    /// Whether the subject (a user, a device or both) has access, to one product, one entitlement or any.
    /// With `minSeq` (a write's `EntitledResponse.sequence`), answered once the server has applied that
    /// change, or `stale` if it does not within its `--min-seq-wait`. With an `at` before the newest
    /// change, a subject with more than 10,000 memberships is refused with `over_limit` (checking now never is).
    public static func check(
        user: String? = nil, device: String? = nil, product: String? = nil, entitlement: String? = nil, at: String? = nil,
        minSeq: UInt64? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "check",
            [
                ("user", user.map(JSONValue.string)), ("device", device.map(JSONValue.string)),
                ("product", product.map(JSONValue.string)), ("entitlement", entitlement.map(JSONValue.string)),
                ("at", at.map(JSONValue.string)), ("minSeq", minSeq.map { JSONValue.number(String($0)) }),
            ]
        )
    }

    /// Creates a membership. Give `expiresAt` (an RFC 3339 time) or `duration` (`"30d"`, `"1mo"`), or neither for lifetime.
    ///
    /// The lifecycle fields are optional; the server's defaults are `willRenew` false, `periodType`
    /// `normal`, `environment` `production`, `ownership` `purchased` and `grantType` `purchase`.
    /// `originalTransactionId` needs `transactionId`. A grant repeated with the same `idempotencyKey` is
    /// answered with the first grant's membership and `"idempotentReplay":true` (see
    /// `EntitledResponse.isIdempotentReplay`); the same key with a different grant is a `conflict`.
    /// `reason` is kept in the audit trail (`history`).
    ///
    /// For a purchase imported after the fact (a store's subscriber of two years), `purchasedAt` (an RFC
    /// 3339 time, not more than an hour ahead of the server's clock) is when the store sold it: the
    /// membership's `createdAt`, its transaction's time and what `duration` counts from; checks of a
    /// moment before it see nothing. `renewsCount` (0...100,000) is how many renewals the store made
    /// before, which later `renewal` events add to. A replay ignores both, as it ignores the other terms.
    public static func grant(
        user: String? = nil, device: String? = nil, product: String, plan: String? = nil, source: String? = nil,
        expiresAt: String? = nil, duration: String? = nil, purchasedAt: String? = nil, renewsCount: Int? = nil,
        willRenew: Bool? = nil, periodType: String? = nil,
        environment: String? = nil, ownership: String? = nil, grantType: String? = nil, transactionId: String? = nil,
        originalTransactionId: String? = nil, idempotencyKey: String? = nil, reason: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "grant",
            [
                ("user", user.map(JSONValue.string)), ("device", device.map(JSONValue.string)), ("product", .string(product)),
                ("plan", plan.map(JSONValue.string)), ("source", source.map(JSONValue.string)),
                ("expiresAt", expiresAt.map(JSONValue.string)), ("duration", duration.map(JSONValue.string)),
                ("purchasedAt", purchasedAt.map(JSONValue.string)), ("renewsCount", renewsCount.map { JSONValue.number(String($0)) }),
                ("willRenew", willRenew.map(JSONValue.bool)), ("periodType", periodType.map(JSONValue.string)),
                ("environment", environment.map(JSONValue.string)), ("ownership", ownership.map(JSONValue.string)),
                ("grantType", grantType.map(JSONValue.string)), ("transactionId", transactionId.map(JSONValue.string)),
                ("originalTransactionId", originalTransactionId.map(JSONValue.string)),
                ("idempotencyKey", idempotencyKey.map(JSONValue.string)), ("reason", reason.map(JSONValue.string)),
            ]
        )
    }

    /// Gives the device's guest memberships to the user; `reason` is kept in the audit trail.
    public static func claim(device: String, user: String, reason: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "claim", ["device": device, "user": user, "reason": reason])
    }

    /// Takes a membership back.
    public static func revoke(membership: String, reason: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "revoke", ["membership": membership, "reason": reason])
    }

    /// Moves a membership's expiry later by hand (an admin operation): `duration` (`"7d"`, `"1mo"`) later
    /// than its expiry, or than now once it has expired; or to `expiresAt` (an RFC 3339 time), later than
    /// both. Give one of the two. A `duration` sent twice extends twice: to retry safely, send `expiresAt`.
    /// The answer's `previousExpiresAt` is the expiry before.
    public static func extend(membership: String, duration: String? = nil, expiresAt: String? = nil, reason: String? = nil)
        -> EntitledRequest
    {
        EntitledRequest(op: "extend", ["membership": membership, "duration": duration, "expiresAt": expiresAt, "reason": reason])
    }

    /// A page of the change feed (admin only): the changes after change `afterSeq` (0: from the oldest,
    /// which is refused `truncated` once the feed's retention let changes go), oldest first, at most
    /// about `limit` (default 100, at most 1000; a change's items are never split). With `wait`
    /// (milliseconds, at most 30,000), a read that finds no change waits that long for one. Read on from
    /// the answer's `FeedPageInfo.next`.
    public static func changes(afterSeq: UInt64 = 0, limit: Int? = nil, wait: Int? = nil) -> EntitledRequest {
        EntitledRequest(
            op: "changes",
            [
                ("afterSeq", .number(String(afterSeq))), ("limit", limit.map { JSONValue.number(String($0)) }),
                ("wait", wait.map { JSONValue.number(String($0)) }),
            ]
        )
    }

    /// A page of a full copy of every membership, as of one change (admin only). Without `after`, takes a
    /// new copy and answers its first page (with the catalog); with `after` (the answer's `next`, a
    /// string, passed back unchanged) reads on from it. `limit`: memberships a page (1...1000, default
    /// 1000). `history`: each page carries its memberships' audit entries too. The copy is held by the one
    /// server that answered the first page: send every page to it (one connection), and then read the
    /// change feed with `changes(afterSeq:)` set to the answer's `export.seq`.
    public static func export(after: String? = nil, limit: Int? = nil, history: Bool = false) -> EntitledRequest {
        EntitledRequest(
            op: "export",
            [
                ("after", after.map(JSONValue.string)), ("limit", limit.map { JSONValue.number(String($0)) }),
                // Sent only when asked for (the server's default is false). `Optional` spelt out: JSONValue
                // takes `nil` as JSON null, which would send "history":null.
                ("history", history ? Optional(JSONValue.bool(true)) : nil),
            ]
        )
    }

    /// A page of the memberships the subject can see, newest first; `minSeq` as for `check`.
    ///
    /// The listing is paged (protocol version 4): at most `limit` memberships (1...1000; the server's
    /// default is 100) after the membership `after`, the `EntitledResponse.next` of the page before. An
    /// answer with more to come carries `next`; the last page has none. `allMemberships` on a connection
    /// or a pool follows the pages to the end. With an `at` before the newest change, a subject with more
    /// than 10,000 memberships is refused with `over_limit`.
    public static func memberships(
        user: String? = nil, device: String? = nil, at: String? = nil, minSeq: UInt64? = nil, limit: Int? = nil, after: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "memberships",
            [
                ("user", user.map(JSONValue.string)), ("device", device.map(JSONValue.string)), ("at", at.map(JSONValue.string)),
                ("minSeq", minSeq.map { JSONValue.number(String($0)) }),
            ] + pageFields(limit: limit, after: after)
        )
    }

    /// A page of the memberships holding the store transaction `transactionId` (a grant's or an
    /// event's), newest first; `minSeq` as for `check`, `limit` and `after` as for `memberships(user:...)`.
    public static func memberships(transactionId: String, minSeq: UInt64? = nil, limit: Int? = nil, after: String? = nil) -> EntitledRequest {
        EntitledRequest(
            op: "memberships",
            [("transactionId", .string(transactionId)), ("minSeq", minSeq.map { JSONValue.number(String($0)) })]
                + pageFields(limit: limit, after: after)
        )
    }

    /// A page of the memberships of the subscription whose first transaction is `originalTransactionId`,
    /// newest first; `minSeq` as for `check`, `limit` and `after` as for `memberships(user:...)`.
    public static func memberships(
        originalTransactionId: String, minSeq: UInt64? = nil, limit: Int? = nil, after: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "memberships",
            [("originalTransactionId", .string(originalTransactionId)), ("minSeq", minSeq.map { JSONValue.number(String($0)) })]
                + pageFields(limit: limit, after: after)
        )
    }

    /// A page of the memberships of `source` (`"app_store"`, `"play_store"`, `"stripe"`, ...), oldest
    /// (first created) first: what a reconciliation with the store reads. With `endedAfter` (an RFC 3339
    /// time), only those that may still have had access at or after it: lifetime and not revoked, or an
    /// `expiresAt` or grace period's end at or after it, or revoked at or after it. `minSeq` as for `check`.
    ///
    /// Each page looks at a bounded number of memberships of the whole store (20,000), so it may hold
    /// fewer than `limit` (1...1000; 100 by default), even none, and still have an `EntitledResponse.next`:
    /// follow `next` (pass it as `after`, or `page(after:)`) until an answer has none, which happens only at
    /// the end of the store. Memberships granted meanwhile come at the end; erased ones are skipped. A
    /// `next` is a position, not a membership id: given to another node or after a restart it goes on after
    /// the last membership the page looked at, and is refused (`bad_request`) when that one is not there
    /// (erased since, or not yet applied on that node): start again without `after`.
    public static func memberships(
        source: String, endedAfter: String? = nil, minSeq: UInt64? = nil, limit: Int? = nil, after: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "memberships",
            [
                ("source", .string(source)), ("endedAfter", endedAfter.map(JSONValue.string)),
                ("minSeq", minSeq.map { JSONValue.number(String($0)) }),
            ] + pageFields(limit: limit, after: after)
        )
    }

    /// `limit` and `after` of a paged read, left out when `nil`.
    private static func pageFields(limit: Int?, after: String?) -> [(key: String, value: JSONValue?)] {
        [("limit", limit.map { JSONValue.number(String($0)) }), ("after", after.map(JSONValue.string))]
    }

    /// Sets the products that unlock an entitlement; `reason` is kept in the audit trail. `products` must
    /// not be empty (`bad_request`): `undefine` removes an entitlement.
    public static func define(entitlement: String, products: [String], reason: String? = nil) -> EntitledRequest {
        EntitledRequest(
            op: "define",
            [
                ("entitlement", .string(entitlement)), ("products", .array(products.map(JSONValue.string))),
                ("reason", reason.map(JSONValue.string)),
            ]
        )
    }

    /// Removes an entitlement from the catalog (an admin operation); answered with the products it had.
    /// `not_found` when the catalog has no such entitlement. `reason` is kept in the audit trail.
    public static func undefine(entitlement: String, reason: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "undefine", ["entitlement": entitlement, "reason": reason])
    }

    /// Erases a person (an admin operation; GDPR's right to be forgotten): the user's memberships, the
    /// device's guest purchases, their audit entries and idempotency keys; other users' purchases on the
    /// device lose the device. Give `user`, `device` or both. Answered with
    /// `{"erased":{"memberships":N,"historyEntries":M}}`. `reason` is kept in the audit trail's erasure
    /// entry, which names no one: put a ticket number there, not the person.
    public static func erase(user: String? = nil, device: String? = nil, reason: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "erase", ["user": user, "device": device, "reason": reason])
    }

    /// A page of the audit trail's erasures, newest first (entries with `action` `erase`, naming no
    /// one); `limit` and `after` as for `history`.
    public static func erasureHistory(limit: Int? = nil, after: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "history", [("erasures", .bool(true))] + pageFields(limit: limit, after: after))
    }

    /// Applies a store's lifecycle event to a membership: a renewal, a cancellation, a billing issue, ...
    /// (`EntitledEventName`).
    ///
    /// - Parameters:
    ///   - eventId: the store's id of the event; the same id again is answered `"applied":false`,
    ///     `"reason":"duplicate"`.
    ///   - eventTime: when the store says it happened (RFC 3339); an event older than the last one applied
    ///     is answered `"applied":false`, `"reason":"out_of_order"`.
    ///   - expiresAt: the new expiry; required for `renewal` and `extension`, optional for `resume`.
    ///   - gracePeriodExpiresAt: for `billing_issue`, when the grace period ends.
    ///   - product: for `product_change`, the new product.
    /// The server refuses a field the type does not use.
    public static func event(
        membership: String, type: EntitledEventName, eventId: String, eventTime: String, expiresAt: String? = nil,
        gracePeriodExpiresAt: String? = nil, product: String? = nil, transactionId: String? = nil, reason: String? = nil
    ) -> EntitledRequest {
        event(
            membership: membership, type: type.rawValue, eventId: eventId, eventTime: eventTime, expiresAt: expiresAt,
            gracePeriodExpiresAt: gracePeriodExpiresAt, product: product, transactionId: transactionId, reason: reason
        )
    }

    /// An `event` whose type is given as its protocol name: for a name a person typed (entitlectl's
    /// `event`), which a newer server may know and this library not yet. Code that sends a type it knows
    /// passes an `EntitledEventName`, which cannot be misspelt.
    public static func event(
        membership: String, type: String, eventId: String, eventTime: String, expiresAt: String? = nil,
        gracePeriodExpiresAt: String? = nil, product: String? = nil, transactionId: String? = nil, reason: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "event",
            [
                "membership": membership, "type": type, "eventId": eventId, "eventTime": eventTime, "expiresAt": expiresAt,
                "gracePeriodExpiresAt": gracePeriodExpiresAt, "product": product, "transactionId": transactionId,
                "reason": reason,
            ]
        )
    }

    /// What the subject is entitled to, in the shape of RevenueCat's CustomerInfo (see
    /// `EntitledResponse.customer`); `minSeq` as for `check`. A subject with more than 10,000 memberships
    /// is refused with `over_limit`: list them with `memberships`, page by page, instead.
    public static func customer(user: String? = nil, device: String? = nil, minSeq: UInt64? = nil) -> EntitledRequest {
        EntitledRequest(
            op: "customer",
            [
                ("user", user.map(JSONValue.string)), ("device", device.map(JSONValue.string)),
                ("minSeq", minSeq.map { JSONValue.number(String($0)) }),
            ]
        )
    }

    /// A page of the audit trail, newest first: of the memberships a subject has or had (give `user`,
    /// `device` or both), or of an entitlement's definitions (give `entitlement`). `limit` is 1...1000
    /// entries (the server's default is 100). `after` is the `EntitledResponse.next` of the page before,
    /// passed back unchanged (an opaque cursor); an answer with more to come carries `next`, the last page
    /// has none. `allHistory` on a connection or a pool follows the pages to the end. A subject with more
    /// than 10,000 memberships is refused with `over_limit`.
    public static func history(
        user: String? = nil, device: String? = nil, entitlement: String? = nil, limit: Int? = nil, after: String? = nil
    ) -> EntitledRequest {
        EntitledRequest(
            op: "history",
            [
                ("user", user.map(JSONValue.string)), ("device", device.map(JSONValue.string)),
                ("entitlement", entitlement.map(JSONValue.string)),
            ] + pageFields(limit: limit, after: after)
        )
    }

    /// Asks the server to push a line to this connection whenever the access of the user, the device or
    /// both changes (read them with `EntitledConnection.nextPush`). Answered with the connection's number
    /// of watches.
    public static func watch(user: String? = nil, device: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "watch", ["user": user, "device": device])
    }

    /// Watches every subject. Needs the admin role (`forbidden` with a check token); `over_limit` while 16
    /// connections watch every subject already.
    public static let watchAll = EntitledRequest(op: "watch", fields: [("all", .bool(true))])

    /// Stops watching the user, the device or both; with neither, stops every watch of the connection.
    public static func unwatch(user: String? = nil, device: String? = nil) -> EntitledRequest {
        EntitledRequest(op: "unwatch", ["user": user, "device": device])
    }

    /// Stops the watch of every subject (`watchAll`), keeping the watches of single subjects.
    public static let unwatchAll = EntitledRequest(op: "unwatch", fields: [("all", .bool(true))])

    /// Authenticates the connection (servers with authentication turned on).
    public static func auth(token: String) -> EntitledRequest {
        EntitledRequest(op: "auth", ["token": token])
    }
}

extension EntitledRequest {
    /// The protocol names this library knows for the fields that take one of a list.
    public enum Names {
        public static let sources = ["app_store", "play_store", "stripe", "whop", "manual", "promotional"]
        public static let periodTypes = ["normal", "trial", "intro", "promotional"]
        public static let environments = ["production", "sandbox"]
        public static let ownerships = ["purchased", "family_shared"]
        public static let grantTypes = ["purchase", "family_sharing", "offer_code", "manual"]
        /// The `type`s of an `event`.
        public static let eventTypes = EntitledEventName.allCases.map(\.rawValue)
    }
}
