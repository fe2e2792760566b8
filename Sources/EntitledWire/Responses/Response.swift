import EntitledCore

/// The successful outcome of a request, ready to be written as a response line.
public enum Response: Sendable {
    /// `ping`: nothing but `ok`.
    case pong
    /// `grant` and `revoke`: the membership, its status computed at `moment`.
    case membership(Membership, moment: Timestamp)
    /// `check`: `active`, and `expiresAt` when active.
    case access(AccessResult)
    /// `claim`: how many memberships moved.
    case claimed(Int)
    /// `memberships`: a page of the memberships listed, statuses computed at `moment`, and where the
    /// next page starts (`nil` on the last): the id of the page's last membership, or for a source's
    /// listing a position (`SourceCursor.text`), given back as `after` as it is.
    case memberships([Membership], moment: Timestamp, next: String?)
    /// `define`: the entitlement and its products as stored.
    case defined(entitlement: String, products: [String])
    /// `undefine`: the entitlement removed and the products it had.
    case undefined(entitlement: String, products: [String])
    /// `erase`: how many memberships and audit entries it removed.
    case erased(memberships: Int, historyEntries: Int)
    /// `catalog`: every entitlement and its products.
    case catalog([(entitlement: String, products: [String])])
    /// `snapshot`: the file written, the last change it holds, its size and how long it took.
    case snapshot(SnapshotSummary)
    /// `grant` retried with an idempotency key: the first grant's membership, and `idempotentReplay`.
    case replayedGrant(Membership, moment: Timestamp)
    /// `grant` of a purchase another owner held, moved to the grant's user by the transfer rule: the
    /// membership, and `transferredFrom` (the user, or for a guest purchase the device, it was taken from).
    case transferredGrant(Membership, moment: Timestamp, from: Subject)
    /// `extend`: the membership as extended (status at `moment`), and the expiry it had before.
    case extended(Membership, moment: Timestamp, previousExpiresAt: Timestamp)
    /// `event`: the membership after it, whether it was applied, and why not.
    case event(Membership, moment: Timestamp, outcome: EventOutcome)
    /// `customer`: the CustomerInfo view.
    case customer(CustomerInfo)
    /// `history`: a page of audit entries, newest first, and where the next page starts (`nil` on the last).
    case history([AuditEntry], next: HistoryCursor?)
    /// `changes`: a page of the change feed.
    case changes(FeedPage)
    /// `export`: a page of a full copy, as of change `sequence` taken at `moment` (statuses computed
    /// then); the first page has the catalog, and with history the catalog's and erasures' trail.
    case export(ExportAnswer)
    /// `watch` and `unwatch`: how many watches the connection has now.
    case watches(Int)
    /// `hello`: the protocol version, the server's name and version, the operations it answers (written
    /// as `operations`, and with the fields each takes as `fields`), and whether a connection must `auth`
    /// before anything but `ping`, `hello` and `auth`.
    case hello(protocolVersion: Int, server: String, operations: [Request.Operation], authRequired: Bool)
    /// `auth` accepted: the name the token belongs to (the audit trail's actor), its role, and whether
    /// the server requires authentication at all (without it, every `auth` is accepted as `local`).
    case authenticated(name: String, role: String, authRequired: Bool)
    /// `stats`: the server's counters. `indirect` (boxed): inline, the largest payload sets the size of
    /// every `Response`, and a check's `.access` answer is copied at that size (callgrind: the
    /// persistence fields that tell a full disk cost 12 instructions a check in `memcpy` inline).
    indirect case stats(ServerStatistics)
    /// `reload`: how many tokens the auth file holds now.
    case reloaded(tokens: Int)
}
