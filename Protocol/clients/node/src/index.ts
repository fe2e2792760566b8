// entitled-client: the Node.js client of the entitled entitlement server (protocol version 5).

export { Client, createClient } from './client.js';
export type { ClientOptions, FollowOptions, IterateOptions, WatchOptions } from './client.js';
export { Connection } from './connection.js';
export type { CallOptions, ConnectionOptions, Line, TlsOptions } from './connection.js';
export { WatchStream } from './watch.js';
export { ChangeFollower } from './feed.js';
export { ExportReader } from './export.js';
export { DEFAULT_PORT, parseAddress } from './address.js';
export type { Address, NodeAddress } from './address.js';
export type { BackoffPolicy } from './backoff.js';
export { OPERATION_FIELDS, OPERATION_METHODS, READ_OPERATIONS, isWriteOperation } from './operations.js';
export type { Operation } from './operations.js';
export * from './errors.js';
export type {
  AccessEvent, Catalog, ChangesParams, ChangesResult, CheckParams, CheckResult, ClaimParams, ClaimResult, Customer,
  CustomerParams, DefineParams, DefineResult, Duration, DurationUnit, EntitlementInfo, Environment, EraseParams,
  EraseResult, EventParams, EventResult, EventType, ExportPage, ExportParams, ExtendParams, ExtendResult, FeedItem,
  FollowParams, GapEvent, GrantParams, GrantResult, GrantType, HelloResult, HistoryEntry, HistoryParams, Membership,
  MembershipsParams, Ownership, Page, PeriodType, PushCause, ReloadResult, RenewState, RequestOptions, RevokeParams,
  RevokeResult, SnapshotResult, Source, Stats, Status, Subject, Time, Transaction, UndefineParams, UndefineResult,
  WatchEvent, WatchTarget, WriteResult,
} from './types.js';
