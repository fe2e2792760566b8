import EntitledCore

/// The version of the protocol this server speaks (PROTOCOL.md §7): what `hello` answers. Raised only for
/// a change an older client could misread or that refuses what an older server accepted; additions keep
/// it. Version 2: unknown request fields and fields an operation does not use are refused, not skipped,
/// and `define` needs at least one product. Version 3: every write's answer carries `seq`, `check`,
/// `memberships` and `customer` take `minSeq`, and error code `stale` is new. Version 4: `memberships` is
/// paged like `history` (`limit`, default 100, and `after`; an answer with more to come carries `next`),
/// so an older client could take a first page for the whole list; `history` takes `after`; error code
/// `over_limit` is new.
public let protocolVersion = 5

/// A decoded, validated request: everything an operation needs, typed.
public enum Request: Sendable {
    case ping
    /// Which protocol version, server and operations this is.
    case hello
    /// Create a membership; `reason` is for the audit trail.
    ///
    /// `indirect`, as `event` is: their payloads are several times a check's, and an enum is as large as
    /// its largest case, so inline they made every check's `Request` bigger to copy (callgrind: about 600
    /// more instructions a check in `memcpy`). A grant pays one small allocation instead.
    indirect case grant(Grant, reason: String?)
    case check(AccessQuery)
    case claim(device: String, user: String, reason: String?)
    case revoke(MembershipID, reason: String?)
    /// List the memberships `selection` names, newest first, at most `limit` after the membership
    /// `after`; statuses are computed at `moment` (now if `nil`).
    case memberships(MembershipSelection, moment: Timestamp?, limit: Int, after: MembershipID?)
    case define(entitlement: String, products: [String], reason: String?)
    case catalog
    /// Write a snapshot of the whole state now (an admin operation).
    case snapshot
    /// Apply a store's lifecycle event to a membership.
    indirect case event(MembershipID, LifecycleEvent, reason: String?)
    /// The CustomerInfo view of what `subject` sees.
    case customer(Subject)
    /// The audit trail of a subject or an entitlement, newest first, at most `limit` entries after `after`.
    case history(HistoryTarget, limit: Int, after: HistoryCursor?)
    /// Push a line to this connection whenever the target's access changes.
    case watch(WatchTarget)
    /// Stop pushing for the target; `nil`: stop every watch of this connection.
    case unwatch(WatchTarget?)
    /// Authenticate the connection with a token of the server's auth file.
    case auth(token: String)
    /// The server's counters: connections, requests, errors, latency, store size, durability.
    case stats
    /// Re-read the server's auth file (`--auth`), as SIGHUP does (an admin operation).
    case reload
    /// Remove an entitlement from the catalog (an admin operation).
    case undefine(entitlement: String, reason: String?)
    /// Erase a person: a user, a device or both (an admin operation; GDPR's right to be forgotten).
    case erase(Subject, reason: String?)
    /// Move a membership's expiry later by hand (an admin operation).
    case extend(MembershipID, ExpiryExtension, reason: String?)
    /// A page of the change feed: the changes after change `after`, oldest first, at most about `limit`
    /// items, of `subject` only if given; when none is there yet, waiting at most `waitMilliseconds` for
    /// one (an admin operation).
    case changes(after: UInt64, limit: Int, waitMilliseconds: Int, subject: Subject?)
    /// A page of a full copy of the store as of one change (an admin operation): the first page (`after`
    /// `nil`) takes the copy, the next ones read on from it; with `history`, the audit trail too.
    case export(after: ExportCursor?, limit: Int, history: Bool)

    /// Whether the request changes the store: what a node of a cluster runs through its replicated log.
    public var isWrite: Bool {
        switch self {
        case .grant, .claim, .revoke, .define, .event, .undefine, .erase, .extend: return true
        default: return false
        }
    }

    /// Whether the request is answered from the store's memberships or catalog: what a cluster node
    /// withholds while its replica is reloaded after the database lost changes it held.
    public var readsStore: Bool {
        switch self {
        case .check, .memberships, .catalog, .customer, .history, .changes, .export: return true
        default: return false
        }
    }

    /// The longest `wait` of a read of the change feed, in milliseconds.
    public static let maximumFeedWaitMilliseconds = 30_000

    /// The longest `token` accepted by `auth`, in UTF-8 bytes.
    public static let maximumTokenBytes = 1024

    /// The operation's name on the wire.
    public var op: Operation {
        switch self {
        case .ping: return .ping
        case .hello: return .hello
        case .grant: return .grant
        case .check: return .check
        case .claim: return .claim
        case .revoke: return .revoke
        case .memberships: return .memberships
        case .define: return .define
        case .catalog: return .catalog
        case .snapshot: return .snapshot
        case .event: return .event
        case .customer: return .customer
        case .history: return .history
        case .watch: return .watch
        case .unwatch: return .unwatch
        case .auth: return .auth
        case .stats: return .stats
        case .reload: return .reload
        case .undefine: return .undefine
        case .erase: return .erase
        case .extend: return .extend
        case .changes: return .changes
        case .export: return .export
        }
    }

    /// The operations, by their names on the wire (in the order `hello` lists them: newer ones last).
    public enum Operation: String, Sendable, CaseIterable {
        case ping, grant, check, claim, revoke, memberships, define, catalog, snapshot, event, customer, history, watch,
            unwatch, hello, auth, stats, reload, undefine, erase, extend, changes, export
    }
}

/// Whose audit trail a `history` request asks for.
public enum HistoryTarget: Hashable, Sendable {
    /// The memberships a user or device has or had.
    case subject(Subject)
    /// An entitlement's definitions in the catalog.
    case entitlement(String)
    /// The erasures (`erase`), which name no one.
    case erasures
}

/// What a `watch` follows.
public enum WatchTarget: Hashable, Sendable {
    /// One user, one device, or both.
    case subject(Subject)
    /// Every subject.
    case all
}

extension Request.Operation {
    /// The operation whose name is exactly these UTF-8 bytes.
    ///
    /// Matched in place rather than through `init(rawValue:)`: building the String and the standard
    /// library's string switch cost about 700 instructions of a check's 8,000 in callgrind.
    init?(utf8 name: UnsafeRawBufferPointer) {
        guard !name.isEmpty else { return nil }
        let candidate: Self
        switch (name.count, name[0]) {
        case (4, UInt8(ascii: "p")): candidate = .ping
        case (4, UInt8(ascii: "a")): candidate = .auth
        case (5, UInt8(ascii: "c")): candidate = name[1] == UInt8(ascii: "h") ? .check : .claim
        case (5, UInt8(ascii: "g")): candidate = .grant
        // revoke and reload: the same length and first letter, told apart by the third.
        case (6, UInt8(ascii: "r")): candidate = name[2] == UInt8(ascii: "v") ? .revoke : .reload
        case (6, UInt8(ascii: "d")): candidate = .define
        // catalog and changes: the same length and first letter, told apart by the second.
        case (7, UInt8(ascii: "c")): candidate = name[1] == UInt8(ascii: "a") ? .catalog : .changes
        case (8, UInt8(ascii: "s")): candidate = .snapshot
        case (11, UInt8(ascii: "m")): candidate = .memberships
        case (5, UInt8(ascii: "e")): candidate = name[1] == UInt8(ascii: "v") ? .event : .erase
        // extend and export: the same length and first two letters, told apart by the third.
        case (6, UInt8(ascii: "e")): candidate = name[2] == UInt8(ascii: "t") ? .extend : .export
        case (8, UInt8(ascii: "u")): candidate = .undefine
        case (5, UInt8(ascii: "w")): candidate = .watch
        case (5, UInt8(ascii: "h")): candidate = .hello
        case (5, UInt8(ascii: "s")): candidate = .stats
        case (7, UInt8(ascii: "h")): candidate = .history
        case (7, UInt8(ascii: "u")): candidate = .unwatch
        case (8, UInt8(ascii: "c")): candidate = .customer
        default: return nil
        }
        guard candidate.wireName.isSpelled(by: name) else { return nil }
        self = candidate
    }

    /// `rawValue`, as a static string for byte comparisons.
    var wireName: StaticString {
        switch self {
        case .ping: return "ping"
        case .grant: return "grant"
        case .check: return "check"
        case .claim: return "claim"
        case .revoke: return "revoke"
        case .memberships: return "memberships"
        case .define: return "define"
        case .catalog: return "catalog"
        case .snapshot: return "snapshot"
        case .event: return "event"
        case .customer: return "customer"
        case .history: return "history"
        case .watch: return "watch"
        case .unwatch: return "unwatch"
        case .hello: return "hello"
        case .auth: return "auth"
        case .stats: return "stats"
        case .reload: return "reload"
        case .undefine: return "undefine"
        case .erase: return "erase"
        case .extend: return "extend"
        case .changes: return "changes"
        case .export: return "export"
        }
    }
}
