// The typed requests and answers of protocol version 5 (PROTOCOL.md §4 and §6). Field names are the
// protocol's own. Times in answers are RFC 3339 strings in UTC, as the server writes them (compare them as
// strings or pass them to `new Date()`); times in requests may be strings or Dates. Answers may carry
// fields a newer server adds: they are passed through untouched (PROTOCOL.md §7).

/** An RFC 3339 time (`2027-01-01T00:00:00Z`, any offset) or a Date, sent as its ISO string. */
export type Time = string | Date;

/** A duration unit: seconds, minutes, hours, days, weeks, calendar months and years (PROTOCOL.md §4). */
export type DurationUnit = 's' | 'min' | 'h' | 'd' | 'w' | 'mo' | 'y';
/** A duration such as `"30d"`, `"1mo"` or `"15min"` (`"15m"` is refused: minutes or months?). */
export type Duration = `${number}${DurationUnit}`;

export type Source = 'app_store' | 'play_store' | 'stripe' | 'whop' | 'manual' | 'promotional';
export type PeriodType = 'normal' | 'trial' | 'intro' | 'promotional';
export type Environment = 'production' | 'sandbox';
export type Ownership = 'purchased' | 'family_shared';
export type GrantType = 'purchase' | 'family_sharing' | 'offer_code' | 'manual';
export type RenewState = 'will_renew' | 'non_renewable' | 'billing_issue' | 'canceled';
export type EventType =
  | 'renewal' | 'extension' | 'cancellation' | 'uncancellation' | 'billing_issue' | 'billing_recovered'
  | 'expiration' | 'pause' | 'resume' | 'product_change' | 'refund' | 'refund_reversal';
/**
 * A membership's status. Later versions may add values: judge an unknown one by `isActive`
 * (the `string & {}` keeps editors completing the known values while accepting others).
 */
export type Status = 'active' | 'trialing' | 'past_due' | 'canceled' | 'paused' | 'expired' | 'revoked' | (string & {});

/** The subject of a read or write: a user, a device, or both (at least one). */
export type Subject = { user: string; device?: string } | { user?: string; device: string };

/** A store transaction of a membership (PROTOCOL.md §4, The membership object). */
export interface Transaction {
  id: string;
  originalTransactionId: string;
  type: 'purchase' | 'trial_started' | 'renewal' | 'product_change' | (string & {});
  time: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

/** One purchase or grant of one product (PROTOCOL.md §4, The membership object). */
export interface Membership {
  id: string;
  productId: string;
  planId?: string;
  user?: string;
  device?: string;
  status: Status;
  isActive: boolean;
  createdAt: string;
  expiresAt: string | null;
  source: Source;
  revokedAt?: string;
  reason?: string;
  willRenew: boolean;
  periodType: PeriodType;
  renewState: RenewState;
  renewsCount: number;
  environment: Environment;
  ownership: Ownership;
  grantType: GrantType;
  unsubscribeDetectedAt?: string;
  billingIssueDetectedAt?: string;
  gracePeriodExpiresAt?: string;
  pausedAt?: string;
  transactions?: Transaction[];
}

/** Options every call takes. */
export interface RequestOptions {
  /** Milliseconds to wait for the answer (each attempt); 0 waits forever. Default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Cancels the call: it fails at once with `AbortError`; a write already sent may still be applied. */
  signal?: AbortSignal;
}

/** The answer to every write: the number of the change it made or saw (PROTOCOL.md §1 Change numbers). */
export interface WriteResult {
  seq: number;
}

/** One page of a listing, and the cursor of the next (absent on the last page). */
export interface Page<T> {
  items: T[];
  /** Pass it back unchanged as `after` for the next page. */
  next?: string;
}

// MARK: grant

export interface GrantParams {
  user?: string;
  device?: string;
  product: string;
  plan?: string;
  source?: Source;
  /** When access ends; give this or `duration`, not both. Neither: lifetime. */
  expiresAt?: Time;
  duration?: Duration;
  /** For an imported purchase: when the store sold it. */
  purchasedAt?: Time;
  /** For an imported purchase: the renewals the store made before (0 to 100000). */
  renewsCount?: number;
  willRenew?: boolean;
  periodType?: PeriodType;
  environment?: Environment;
  ownership?: Ownership;
  grantType?: GrantType;
  transactionId?: string;
  originalTransactionId?: string;
  /** Makes a retry safe: a grant with a used key replays the first one's membership. */
  idempotencyKey?: string;
  reason?: string;
}

export interface GrantResult extends WriteResult {
  membership: Membership;
  /** True when nothing was created: the key (or the purchase) was the earlier grant's. */
  idempotentReplay: boolean;
  /** Set when the purchase moved from another owner (PROTOCOL.md, Purchases reported twice). */
  transferredFrom?: { user?: string; device?: string };
}

// MARK: check

export type CheckParams = Subject & {
  product?: string;
  entitlement?: string;
  at?: Time;
  minSeq?: number;
};

export interface CheckResult {
  active: boolean;
  /** When access stops by itself: a time, `null` for never; absent when not active. */
  expiresAt?: string | null;
}

// MARK: claim, revoke, extend

export interface ClaimParams {
  device: string;
  user: string;
  reason?: string;
}
export interface ClaimResult extends WriteResult {
  claimed: number;
}

export interface RevokeParams {
  membership: string;
  reason?: string;
}
export interface RevokeResult extends WriteResult {
  membership: Membership;
}

/** Give `duration` (not idempotent: a repeat extends again) or `expiresAt` (safe to repeat). */
export type ExtendParams = { membership: string; reason?: string } & (
  | { duration: Duration; expiresAt?: undefined }
  | { expiresAt: Time; duration?: undefined }
);
export interface ExtendResult extends WriteResult {
  membership: Membership;
  previousExpiresAt: string;
}

// MARK: memberships

interface PageParams {
  /** Items per page, 1 to 1000 (default 100). */
  limit?: number;
  /** The `next` of the page before, unchanged. */
  after?: string;
  minSeq?: number;
}
/** A subject's memberships (newest first), those holding a store transaction, or a source's (oldest first). */
export type MembershipsParams = PageParams &
  (
    | (Subject & { at?: Time })
    | { transactionId: string }
    | { originalTransactionId: string }
    | { source: Source; endedAfter?: Time }
  );

// MARK: catalog: define, undefine

export interface DefineParams {
  entitlement: string;
  products: string[];
  reason?: string;
}
export interface DefineResult extends WriteResult {
  entitlement: string;
  products: string[];
}
export interface UndefineParams {
  entitlement: string;
  reason?: string;
}
export type UndefineResult = DefineResult;

/** Each entitlement's sorted products. */
export type Catalog = Record<string, string[]>;

export interface SnapshotResult {
  file: string;
  sequence: number;
  bytes: number;
  durationMs: number;
  memberships: number;
}

// MARK: event

export interface EventParams {
  membership: string;
  type: EventType;
  /** The store's id of the event: a redelivery is recognised by it, so a retry is safe. */
  eventId: string;
  eventTime: Time;
  expiresAt?: Time;
  gracePeriodExpiresAt?: Time;
  product?: string;
  transactionId?: string;
  reason?: string;
}
export interface EventResult extends WriteResult {
  membership: Membership;
  applied: boolean;
  /** Why it was ignored, when `applied` is false. */
  reason?: 'duplicate' | 'out_of_order' | 'revoked' | (string & {});
}

// MARK: customer

export type CustomerParams = Subject & { minSeq?: number };

export interface EntitlementInfo {
  isActive: boolean;
  productId: string;
  membership: string;
  expiresAt: string | null;
  willRenew: boolean;
  periodType: PeriodType;
  store: Source;
  latestPurchaseDate: string;
  originalPurchaseDate: string;
  billingIssueDetectedAt: string | null;
  unsubscribeDetectedAt: string | null;
}
/** The CustomerInfo view of a subject (PROTOCOL.md §6 customer). */
export interface Customer {
  entitlements: Record<string, EntitlementInfo>;
  activeProducts: string[];
  allPurchasedProductIds: string[];
  latestExpirationDate: string | null;
  firstSeen: string | null;
  requestDate: string;
}

// MARK: history

export type HistoryParams = { limit?: number; after?: string } & (
  | Subject
  | { entitlement: string }
  | { erasures: true }
);

/** One entry of the audit trail (PROTOCOL.md §5 Audit trail). */
export interface HistoryEntry {
  time: string;
  actor: string;
  action: string;
  reason?: string;
  sequence?: number;
  eventId?: string;
  eventTime?: string;
  previousExpiresAt?: string;
  membership?: Membership;
  entitlement?: string;
  products?: string[];
  erased?: { memberships: number; historyEntries: number };
}

// MARK: erase, reload, hello, stats

export type EraseParams = Subject & { reason?: string };
export interface EraseResult extends WriteResult {
  erased: { memberships: number; historyEntries: number };
}

export interface ReloadResult {
  tokens: number;
}

export interface HelloResult {
  protocol: number;
  server: string;
  operations: string[];
  fields: Record<string, string[]>;
  authRequired: boolean;
}

/** The server's counters (PROTOCOL.md §6 stats): the main ones typed, the rest as the server sends them. */
export interface Stats {
  server: string;
  startedAt: string;
  uptimeSeconds: number;
  connections: { open: number; accepted: number; refused: number; closedIdle: number };
  requests: { total: number; invalid: number; byOp: Record<string, number> };
  errors: { total: number; byCode: Record<string, number> };
  latencyMicros: Record<string, { count: number; p50: number; p90: number; p99: number; p999: number; max: number }>;
  store: { users: number; devices: number; memberships: number; entitlements: number };
  persistence?: Record<string, unknown> | null;
  replication?: Record<string, unknown>;
  [more: string]: unknown;
}

// MARK: watch

/** What a watch covers: a user, a device, both, or every membership (`all`, admin only). */
export type WatchTarget = Subject | { all: true };

export type PushCause =
  | 'grant' | 'claim' | 'revoke' | 'transfer' | 'extend' | 'expired' | 'erase' | EventType | (string & {});

/** A pushed line: a covered membership changed, or its access stopped by itself (cause `expired`). */
export interface AccessEvent {
  kind: 'access';
  cause: PushCause;
  /** The change's number; absent for `expired`, which is no change. Keep the higher one per membership. */
  sequence?: number;
  membership: Membership;
}

/**
 * The watch's connection was lost and is watching again: changes between `from` and `to` were not
 * pushed. Read the state again (`check`, `customer`, `memberships`) for what the watch covers.
 */
export interface GapEvent {
  kind: 'gap';
  from: Date;
  to: Date;
  /** Why the connection was lost. */
  error: Error;
}

export type WatchEvent = AccessEvent | GapEvent;

// MARK: changes (the change feed), export

/** One page of the change feed: the changes after `afterSeq`, oldest first (admin only). */
export interface ChangesParams {
  /** The `next` of the page before (default 0: from the oldest change the feed holds). */
  afterSeq?: number;
  /** Items per page, 1 to 1000 (default 100); a change's items are never split, so a page may hold a few more. */
  limit?: number;
  /**
   * Milliseconds (0 to 30000) the server holds the answer while no change is there, until one comes. The
   * lines sent after it on its connection wait as long, so `Client.changes` sends a waiting read on a
   * connection of its own, with a timeout of at least `wait` + 5 s.
   */
  wait?: number;
  /** Only what concerns this user (their memberships, now or before) and erasures; catalog changes are left out. */
  user?: string;
  /** Only what concerns this device; with `user`, what concerns either. */
  device?: string;
}

/**
 * One item of the change feed: what one change did to one membership, to the catalog, or that a person was
 * erased (an audit entry, like `history`'s, that always has its change's `sequence`). The object is the
 * item as the server wrote it: fields a newer server adds are kept.
 */
export interface FeedItem extends HistoryEntry {
  /** The change's number; the items of one change (a claim that moved several memberships) share it. */
  sequence: number;
  /** For a transfer: whom the membership was taken from. */
  formerOwner?: { user: string } | { device: string };
  /** For an erasure: the memberships it removed (delete them from any copy). */
  erasedMemberships?: string[];
  /** For an erasure: other users' memberships that lost the erased device (take the device off them). */
  detachedMemberships?: string[];
  /**
   * The item as the server wrote it, every field untyped (those a newer server adds too): the same object,
   * as a non-enumerable property, so that `JSON.stringify(item)` and comparisons see the server's fields only.
   */
  readonly raw: Readonly<Record<string, unknown>>;
}

/** A page of the change feed. */
export interface ChangesResult {
  changes: FeedItem[];
  /** The `afterSeq` of the next read (also when the page is empty: it moves past changes a subject read leaves out). */
  next: number;
  /** The newest change the page could show: while `next` is below it, read on at once; else read on with `wait`. */
  newest: number;
  /** The oldest `afterSeq` the feed accepts now; an older one is refused `truncated`. */
  oldestAfterSeq: number;
}

/** Where a change follower starts, and what it follows. */
export interface FollowParams {
  /** Follow the changes after this one: an export's `seq`, or a `position` the application stored. Default 0. */
  afterSeq?: number;
  /** Only what concerns this user (and erasures). */
  user?: string;
  /** Only what concerns this device (and erasures). */
  device?: string;
}

/** One page of an export (admin only): the first (no `after`) takes the copy, `next` reads on. */
export interface ExportParams {
  /** The `next` of the page before, unchanged. Only the node that answered the first page holds it. */
  after?: string;
  /** Memberships per page, 1 to 1000 (default 1000). */
  limit?: number;
  /** Add the audit trail of each page's memberships (the first page also the catalog's and the erasures'). */
  history?: boolean;
}

/** One page of an export. */
export interface ExportPage {
  /** The change the copy is as of (follow the feed after it), and when its statuses were computed. */
  export: { seq: number; time: string };
  /** The catalog as of the copy: on the first page only. */
  entitlements?: Catalog;
  /** In creation order, each as of the copy's change. */
  memberships: Membership[];
  /** With `history: true`: the audit trail of this page's memberships. */
  history?: HistoryEntry[];
  /** Present while more pages follow: pass it back unchanged as `after`, to the same node. */
  next?: string;
}
