// The client: every operation of protocol version 5 as a typed method, over a pool of pipelined connections.
//
// What a failure means for a retry (PROTOCOL.md §3, "What an answer means") is built in:
// - a read (check, memberships, customer, catalog, history, hello, ping, stats, changes) whose connection
//   drops or times out is sent again on another node, at most once per node (on a single node, once more on
//   a new connection after a drop); an export page is not, since only the node that took the copy holds it;
// - a write is never sent twice by the client: its error says whether it may have been applied
//   (`mayHaveBeenApplied`); retry it yourself with the same idempotency key (`grant`'s `idempotencyKey`,
//   `event`'s `eventId`), which replays instead of applying twice;
// - `loading` (a starting server) is waited out, for reads and writes alike (nothing was carried out);
// - `stale` is asked again once on another node when there are several.

import { NodeAddress, parseAddress } from './address.js';
import { BackoffPolicy, DEFAULT_BACKOFF, sleep } from './backoff.js';
import { Connection, Line, Reply, TlsOptions } from './connection.js';
import {
  ClientClosedError, ConnectionClosedError, LoadingError, ProtocolError, StaleError, TimeoutError,
} from './errors.js';
import { ExportReader, exportPage } from './export.js';
import { ChangeFollower, MAX_WAIT_MS, changesResult, waitingTimeout } from './feed.js';
import { Operation, READ_OPERATIONS, checkFields, fieldsJson } from './operations.js';
import { Lease, Pool } from './pool.js';
import {
  Catalog, ChangesParams, ChangesResult, CheckParams, CheckResult, ClaimParams, ClaimResult, Customer, CustomerParams,
  DefineParams, DefineResult, EraseParams, EraseResult, EventParams, EventResult, ExportPage, ExportParams, ExtendParams,
  ExtendResult, FollowParams, GrantParams, GrantResult, HelloResult, HistoryEntry, HistoryParams, Membership,
  MembershipsParams, Page, ReloadResult, RequestOptions, RevokeParams, RevokeResult, SnapshotResult, Stats,
  UndefineParams, UndefineResult, WatchTarget,
} from './types.js';
import { DEFAULT_MAX_QUEUED_PUSHES, WatchStream } from './watch.js';

export interface ClientOptions {
  /** The nodes: `"host:port"`, `"[::1]:port"`, a Unix socket path, or objects. Default `["127.0.0.1:7117"]`. */
  nodes?: NodeAddress[];
  /** A token of the server's `--auth` file, sent first on every new connection. Never logged or shown. */
  token?: string;
  /** Speak TLS: `true` trusts the system's CAs; `{ caFile }` trusts that PEM file (a private CA, a self-signed certificate). */
  tls?: boolean | TlsOptions;
  /** Connections to each node. Default 1: pipelining makes one enough for most applications. */
  connectionsPerNode?: number;
  /** Milliseconds each call waits for its answer (each attempt); 0 waits forever. Default 10000. */
  timeoutMs?: number;
  /** Milliseconds to open a connection (TCP, TLS, auth). Default 5000. */
  connectTimeoutMs?: number;
  /** Milliseconds to keep asking a starting server that answers `loading`; 0 throws `LoadingError` at once. Default 60000. */
  loadingWaitMs?: number;
  /** Send the newest `seq` this client's writes got as `minSeq` on every read that gives none. Default false. */
  readYourWrites?: boolean;
  /** Reconnection backoff: 50 ms doubling up to 2000 ms, full jitter, unless set. */
  backoff?: Partial<BackoffPolicy>;
  /**
   * The most pushes a watch queues that the application has not taken yet; when that many wait, the watch
   * stops reading its connection until the application takes one (see `WatchOptions`). Default 10000.
   */
  maxQueuedPushes?: number;
}

/** Options of `watch`. */
export interface WatchOptions extends RequestOptions {
  /**
   * The most pushes this watch queues that the application has not taken yet; default the client's
   * `maxQueuedPushes` (10000). When that many wait, the watch stops reading its connection until the
   * application takes one: the server holds the pushes, and closes the connection when 4 MiB are left
   * unread, after which the watch reconnects and yields a `gap` event. No push is dropped by the client.
   */
  maxQueuedPushes?: number;
}

/** Options of the page iterators. */
export interface IterateOptions extends RequestOptions {
  /** Items asked for per page (the request's `limit`), 1 to 1000. Default: the server's (100; an export's 1000). */
  pageSize?: number;
}

/** Options of `follow`. `timeoutMs` is each read's that does not wait; `signal` stops the follower (AbortError). */
export interface FollowOptions extends IterateOptions {
  /**
   * Milliseconds each read waits for a change once the follower is caught up (the request's `wait`), 1 to
   * 30000. Default 30000: one request per 30 s while nothing happens, and a change delivered as it comes.
   */
  waitMs?: number;
}

const LOADING_FIRST_PAUSE_MS = 50;
const LOADING_MAX_PAUSE_MS = 1000;

/** Creates a client; the same as `new Client(options)`. Connections open at the first call (or `connect()`). */
export function createClient(options: ClientOptions = {}): Client {
  return new Client(options);
}

/**
 * A client of one or more `entitled` nodes: a pool of pipelined connections (many requests in flight on
 * each, answers matched by id), reconnected with backoff. Every method returns a Promise and takes
 * `{ timeoutMs, signal }` last. Errors are `EntitledError`s: one class per protocol error code
 * (`NotFoundError`, `ConflictError`, ...), and `ConnectionClosedError`, `TimeoutError`, `AbortError`,
 * `NoNodeAvailableError`, `ProtocolError` for the client's own; each says `mayHaveBeenApplied`.
 */
export class Client {
  private readonly pool: Pool;
  private readonly timeoutMs: number;
  private readonly loadingWaitMs: number;
  private readonly readYourWrites: boolean;
  private readonly backoff: BackoffPolicy;
  private readonly maxQueuedPushes: number;
  /** What `close()` closes first: watches, change followers and exports, each on a connection of its own. */
  private readonly streams = new Set<{ close(): Promise<void> }>();
  private newestSeq = 0;
  /** What a `Call` needs of its client: made once, so that a call carries one reference. */
  private readonly hooks: CallHooks = {
    noteSeq: (answer) => this.noteSeq(answer),
    recover: (op, fields, signal, timeoutMs, first) => this.recover(op, fields, signal, timeoutMs, first),
  };

  constructor(options: ClientOptions = {}) {
    const nodes = (options.nodes ?? ['127.0.0.1:7117']).map(parseAddress);
    if (nodes.length === 0) throw new TypeError('nodes: give at least one node');
    const connectionsPerNode = options.connectionsPerNode ?? 1;
    if (!Number.isInteger(connectionsPerNode) || connectionsPerNode < 1) throw new TypeError('connectionsPerNode: a whole number from 1');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.loadingWaitMs = options.loadingWaitMs ?? 60_000;
    this.readYourWrites = options.readYourWrites ?? false;
    this.backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.maxQueuedPushes = checkMaxQueuedPushes(options.maxQueuedPushes ?? DEFAULT_MAX_QUEUED_PUSHES);
    this.pool = new Pool(nodes, {
      connectionsPerNode,
      backoff: this.backoff,
      connection: { tls: options.tls, token: options.token, connectTimeoutMs: options.connectTimeoutMs },
    });
  }

  /** The highest `seq` a write of this client was answered with (0 before any): pass it as another reader's `minSeq`. */
  get lastSeq(): number {
    return this.newestSeq;
  }

  /** Opens every connection of the pool now rather than at the first call; rejects when a node cannot be reached. */
  async connect(options: RequestOptions = {}): Promise<void> {
    await this.pool.connectAll(options.signal);
  }

  /**
   * Unwatches and closes every watch, change follower and export, then closes the connections once their
   * requests in flight are answered.
   */
  async close(): Promise<void> {
    await Promise.all([...this.streams].map((stream) => stream.close()));
    await this.pool.close();
  }

  // MARK: Reads

  /** Whether the subject has access (to a product, an entitlement, or anything), now or `at` a moment. */
  check(params: CheckParams, options?: RequestOptions): Promise<CheckResult> {
    try {
      return this.execute('check', this.readJson('check', params), options, checkResult);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** One page of memberships (newest first; a source's oldest first). Follow `next`, or use `membershipsIterator`. */
  async memberships(params: MembershipsParams, options?: RequestOptions): Promise<Page<Membership>> {
    const answer = await this.execute('memberships', this.readJson('memberships', params), options);
    return page(answer.memberships as Membership[], answer.next);
  }

  /** Every membership of a listing, following `next` page by page (`after` passed back unchanged). */
  membershipsIterator(params: MembershipsParams, options: IterateOptions = {}): AsyncGenerator<Membership, void, undefined> {
    return this.iterate((after) => this.memberships(withPage(params, options.pageSize, after), options), params.after);
  }

  /** The subject's CustomerInfo view: entitlements, active and purchased products. */
  async customer(params: CustomerParams, options?: RequestOptions): Promise<Customer> {
    const answer = await this.execute('customer', this.readJson('customer', params), options);
    return answer.customer as Customer;
  }

  /** Every entitlement of the catalog, with its products. */
  async catalog(options?: RequestOptions): Promise<Catalog> {
    const answer = await this.execute('catalog', '', options);
    return answer.entitlements as Catalog;
  }

  /** One page of an audit trail (a subject's, an entitlement's, or the erasures'), newest first. */
  async history(params: HistoryParams, options?: RequestOptions): Promise<Page<HistoryEntry>> {
    const answer = await this.execute('history', fieldsJson('history', params), options);
    return page(answer.history as HistoryEntry[], answer.next);
  }

  /** Every entry of an audit trail, following `next` page by page. */
  historyIterator(params: HistoryParams, options: IterateOptions = {}): AsyncGenerator<HistoryEntry, void, undefined> {
    return this.iterate((after) => this.history(withPage(params, options.pageSize, after), options), params.after);
  }

  /** The protocol version, server, operations and fields of the server. */
  async hello(options?: RequestOptions): Promise<HelloResult> {
    return strip(await this.execute('hello', '', options)) as unknown as HelloResult;
  }

  /** Resolves when a node answers. */
  async ping(options?: RequestOptions): Promise<void> {
    await this.execute('ping', '', options);
  }

  /** The server's counters (admin). */
  async stats(options?: RequestOptions): Promise<Stats> {
    return strip(await this.execute('stats', '', options)) as unknown as Stats;
  }

  // MARK: Writes

  /**
   * Creates a membership. Give an `idempotencyKey` to make a retry safe: after an error with
   * `mayHaveBeenApplied`, the same grant with the same key answers the first one's membership
   * (`idempotentReplay: true`) instead of creating a second.
   */
  async grant(params: GrantParams, options?: RequestOptions): Promise<GrantResult> {
    const answer = await this.execute('grant', fieldsJson('grant', params), options);
    const result = strip(answer) as unknown as GrantResult;
    result.idempotentReplay = answer.idempotentReplay === true;
    return result;
  }

  /** Gives the device's guest memberships to the user (the SDKs' logIn). Safe to repeat. */
  async claim(params: ClaimParams, options?: RequestOptions): Promise<ClaimResult> {
    return strip(await this.execute('claim', fieldsJson('claim', params), options)) as unknown as ClaimResult;
  }

  /** Revokes a membership (final). Safe to repeat: a repeat answers it as revoked. */
  async revoke(params: RevokeParams, options?: RequestOptions): Promise<RevokeResult> {
    return strip(await this.execute('revoke', fieldsJson('revoke', params), options)) as unknown as RevokeResult;
  }

  /** Moves a membership's expiry later (admin). With `duration` a repeat extends again; `expiresAt` is safe to repeat. */
  async extend(params: ExtendParams, options?: RequestOptions): Promise<ExtendResult> {
    return strip(await this.execute('extend', fieldsJson('extend', params), options)) as unknown as ExtendResult;
  }

  /** Applies a store's lifecycle event. Safe to repeat: a redelivered `eventId` is ignored (`applied: false`). */
  async event(params: EventParams, options?: RequestOptions): Promise<EventResult> {
    return strip(await this.execute('event', fieldsJson('event', params), options)) as unknown as EventResult;
  }

  /** Sets the products that unlock an entitlement (admin). */
  async define(params: DefineParams, options?: RequestOptions): Promise<DefineResult> {
    return strip(await this.execute('define', fieldsJson('define', params), options)) as unknown as DefineResult;
  }

  /** Removes an entitlement from the catalog (admin). */
  async undefine(params: UndefineParams, options?: RequestOptions): Promise<UndefineResult> {
    return strip(await this.execute('undefine', fieldsJson('undefine', params), options)) as unknown as UndefineResult;
  }

  /** Erases a person (GDPR): their memberships, trail and idempotency keys (admin). */
  async erase(params: EraseParams, options?: RequestOptions): Promise<EraseResult> {
    return strip(await this.execute('erase', fieldsJson('erase', params), options)) as unknown as EraseResult;
  }

  /** Writes a snapshot of the whole state now (admin). */
  async snapshot(options?: RequestOptions): Promise<SnapshotResult> {
    return strip(await this.execute('snapshot', '', options)) as unknown as SnapshotResult;
  }

  /** Makes the server read its auth file again (admin); answers the number of tokens in force. */
  async reload(options?: RequestOptions): Promise<ReloadResult> {
    return strip(await this.execute('reload', '', options)) as unknown as ReloadResult;
  }

  // MARK: Watching

  /**
   * Watches memberships on a connection of its own and yields their changes (`for await`). If the connection
   * drops, the stream connects again with backoff, watches again, and yields a `gap` event before the next
   * change. Leaving the loop, or `close()`, unwatches. Rejects when the server refuses the watch. At most
   * `maxQueuedPushes` pushes wait for the application; then the watch stops reading until it takes one.
   */
  async watch(target: WatchTarget | WatchTarget[], options: WatchOptions = {}): Promise<WatchStream> {
    if (this.pool.isClosed) throw new ClientClosedError('watch');
    const maxQueuedPushes = checkMaxQueuedPushes(options.maxQueuedPushes ?? this.maxQueuedPushes);
    const targets = (Array.isArray(target) ? target : [target]).map((t) => prepare('watch', t) as WatchTarget);
    const stream: WatchStream = new WatchStream(
      (onPush, signal) => this.pool.openDedicated(onPush, signal),
      () => this.streams.delete(stream),
      targets,
      this.backoff,
      options.timeoutMs ?? this.timeoutMs,
      maxQueuedPushes,
    );
    this.streams.add(stream);
    try {
      return await stream.start();
    } catch (error) {
      this.streams.delete(stream);
      throw error;
    }
  }

  // MARK: The change feed and exports

  /**
   * One page of the change feed (admin): the changes after `afterSeq`, oldest first; read on from `next`, at
   * once while `next < newest`. A read with `wait` holds up the lines after it on its connection, so it is
   * sent on a connection of its own (opened for it, closed after it) with a timeout of at least `wait` + 5 s;
   * to keep reading, `follow` keeps one. Fails with `TruncatedError` when the feed no longer reaches back to
   * `afterSeq`.
   */
  async changes(params: ChangesParams = {}, options: RequestOptions = {}): Promise<ChangesResult> {
    const fields = fieldsJson('changes', params);
    const wait = params.wait;
    if (typeof wait !== 'number' || wait <= 0) return changesResult(await this.execute('changes', fields, options));
    const { connection } = await this.pool.openDedicated(ignorePush, options.signal);
    try {
      const timeoutMs = waitingTimeout(options.timeoutMs ?? this.timeoutMs, wait);
      return changesResult(await new Promise<Line>((resolve, reject) => connection.sendFields('changes', fields, timeoutMs, options.signal, { answer: resolve, fail: reject })));
    } finally {
      void connection.close();
    }
  }

  /**
   * Follows the change feed after `afterSeq` (admin), on a connection of its own: every item, in order, for
   * as long as the application iterates (see `ChangeFollower`). Store its `position` with what the items
   * were applied to, and follow from it after a restart; a `TruncatedError` says to copy again with
   * `openExport`. Nothing is sent until the iteration starts.
   */
  follow(params: FollowParams = {}, options: FollowOptions = {}): ChangeFollower {
    if (this.pool.isClosed) throw new ClientClosedError('changes');
    for (const key of Object.keys(params)) {
      if (key !== 'afterSeq' && key !== 'user' && key !== 'device') throw new TypeError(`follow does not take "${key}"; it takes afterSeq, user, device`);
    }
    const waitMs = options.waitMs ?? MAX_WAIT_MS;
    if (!Number.isInteger(waitMs) || waitMs < 1 || waitMs > MAX_WAIT_MS) throw new TypeError(`waitMs: a whole number from 1 to ${MAX_WAIT_MS}`);
    const follower: ChangeFollower = new ChangeFollower(
      (signal) => this.pool.openDedicated(ignorePush, signal),
      () => this.streams.delete(follower),
      params,
      { backoff: this.backoff, timeoutMs: options.timeoutMs ?? this.timeoutMs, waitMs, pageSize: options.pageSize, signal: options.signal },
    );
    this.streams.add(follower);
    return follower;
  }

  /**
   * One page of an export (admin). Every page of an export must go to the node that answered its first:
   * with several nodes, use `openExport`, which keeps one connection for all of them. Not sent again when
   * its connection drops.
   */
  async export(params: ExportParams = {}, options?: RequestOptions): Promise<ExportPage> {
    return exportPage(await this.execute('export', fieldsJson('export', params), options));
  }

  /**
   * Takes a full copy of the store (admin; its first page, on a connection of its own that every page goes
   * to) and resolves with a reader of it: its `seq`, `time` and `catalog`, then its pages or memberships.
   * At most 4 exports are open at a time on a server: a fifth is refused `OverLimitError`.
   */
  async openExport(params: { history?: boolean } = {}, options: IterateOptions = {}): Promise<ExportReader> {
    if (this.pool.isClosed) throw new ClientClosedError('export');
    for (const key of Object.keys(params)) {
      if (key !== 'history') throw new TypeError(`openExport does not take "${key}"; it takes history (and pageSize as an option)`);
    }
    const reader: ExportReader = await ExportReader.open(
      (signal) => this.pool.openDedicated(ignorePush, signal),
      { pageSize: options.pageSize, history: params.history, timeoutMs: options.timeoutMs ?? this.timeoutMs, signal: options.signal },
      () => this.streams.delete(reader),
    );
    this.streams.add(reader);
    return reader;
  }

  // MARK: Raw

  /**
   * Sends `request` unchanged (its own `id`, or none; nothing checked) on a connection of the pool and
   * resolves with the answer line, error answers included (not thrown). Never sent twice.
   */
  async request(request: Record<string, unknown>, options: RequestOptions = {}): Promise<Line> {
    const lease = await this.pool.acquire(undefined, options.signal);
    return lease.connection.request(request, { timeoutMs: options.timeoutMs ?? this.timeoutMs, signal: options.signal });
  }

  // MARK: Execution

  /** A read's fields as JSON members, with `minSeq` added when `readYourWrites` says so. */
  private readJson(op: 'check' | 'memberships' | 'customer', params: object): string {
    const json = fieldsJson(op, params);
    if (this.readYourWrites && this.newestSeq > 0 && !hasField(params, 'minSeq')) return `${json},"minSeq":${this.newestSeq}`;
    return json;
  }

  /**
   * Sends one typed request and resolves with the success answer (shaped by `shape`). The common case (an
   * open connection, an answer) allocates the Promise, one `Call` and the line, and takes no async frame:
   * the call object is what the connection gives the answer to (no closure per call), and only a failure
   * goes through `recover`, which applies the rules above.
   */
  private execute<T = Line>(op: Operation, fields: string, options: RequestOptions = {}, shape?: (answer: Line) => T): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const signal = options.signal;
    const slot = this.pool.pickOpenSlot();
    return new Promise<T>((resolve, reject) => {
      const call = new Call<T>(this.hooks, op, fields, timeoutMs, signal, shape, resolve, reject);
      if (slot === undefined) call.fail(undefined);
      else call.sendOn(slot.connection as Connection, slot.node);
    });
  }

  private noteSeq(answer: Line): void {
    const seq = answer.seq;
    if (typeof seq === 'number' && seq > this.newestSeq) this.newestSeq = seq;
  }

  /** Sends (again) until an answer, or until the rules above say the failure is the caller's to see. */
  private async recover(
    op: Operation,
    fields: string,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    first: { error: unknown; lease: Lease | undefined } | undefined,
  ): Promise<Line> {
    const read = READ_OPERATIONS.has(op);
    const single = this.pool.nodes.length === 1;
    const lostOn = new Set<number>();
    let resentOnSingleNode = false;
    let staleRetried = false;
    let exclude: Set<number> | undefined;
    let loading: { deadline: number; pause: number } | undefined;
    let failure = first;
    for (;;) {
      if (failure === undefined) {
        let lease: Lease | undefined;
        try {
          const got = this.pool.pickOpen(exclude) ?? (await this.pool.acquire(exclude, signal));
          lease = got;
          return await new Promise<Line>((resolve, reject) => got.connection.sendFields(op, fields, timeoutMs, signal, { answer: resolve, fail: reject }));
        } catch (error) {
          failure = { error, lease };
        }
      }
      const { error, lease } = failure;
      failure = undefined;
      if (error instanceof LoadingError) {
        // A starting server: nothing was carried out. Ask again on a new connection (the server closes
        // this one once it is ready), pausing 50 ms doubling to 1 s, until loadingWaitMs is spent.
        const now = Date.now();
        loading ??= { deadline: now + this.loadingWaitMs, pause: LOADING_FIRST_PAUSE_MS };
        if (now + loading.pause > loading.deadline) throw error;
        if (lease !== undefined) this.pool.retire(lease.connection);
        await sleep(loading.pause, signal);
        loading.pause = Math.min(loading.pause * 2, LOADING_MAX_PAUSE_MS);
        continue;
      }
      if (lease === undefined) throw error;
      if (error instanceof StaleError && !single && !staleRetried) {
        staleRetried = true;
        exclude = new Set([lease.node]);
        continue;
      }
      if (read && (error instanceof ConnectionClosedError || error instanceof TimeoutError || error instanceof ProtocolError)) {
        if (loading !== undefined && error instanceof ConnectionClosedError && Date.now() < loading.deadline) {
          continue; // the server closed its loading connections as it became ready
        }
        lostOn.add(lease.node);
        if (lostOn.size < this.pool.nodes.length) {
          exclude = lostOn;
          continue;
        }
        if (single && !resentOnSingleNode && error instanceof ConnectionClosedError) {
          resentOnSingleNode = true;
          exclude = undefined;
          continue;
        }
      }
      throw error;
    }
  }

  private async *iterate<T>(fetch: (after: string | undefined) => Promise<Page<T>>, first: string | undefined): AsyncGenerator<T, void, undefined> {
    let after = first;
    do {
      const current = await fetch(after);
      yield* current.items;
      after = current.next;
    } while (after !== undefined);
  }
}

interface CallHooks {
  noteSeq(answer: Line): void;
  recover(op: Operation, fields: string, signal: AbortSignal | undefined, timeoutMs: number, first: { error: unknown; lease: Lease | undefined } | undefined): Promise<Line>;
}

/**
 * One typed call of `Client.execute`: the Reply its connection gives the answer (or the failure) to. One
 * object with methods instead of the closures a Promise-per-layer design makes for every call.
 */
class Call<T> implements Reply {
  private connection: Connection | undefined = undefined;
  private node = 0;

  constructor(
    private readonly hooks: CallHooks,
    private readonly op: Operation,
    private readonly fields: string,
    private readonly timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly shape: ((answer: Line) => T) | undefined,
    private readonly resolve: (value: T) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  sendOn(connection: Connection, node: number): void {
    this.connection = connection;
    this.node = node;
    connection.sendFields(this.op, this.fields, this.timeoutMs, this.signal, this);
  }

  answer(line: Line): void {
    this.hooks.noteSeq(line);
    this.resolve(this.shape === undefined ? (line as T) : this.shape(line));
  }

  /** The first attempt failed (or found no open connection, `error` undefined): the client's rules decide. */
  fail(error: Error | undefined): void {
    const connection = this.connection;
    const first = connection === undefined ? undefined : { error, lease: { connection, node: this.node } };
    this.hooks.recover(this.op, this.fields, this.signal, this.timeoutMs, first).then((line) => this.answer(line), this.reject);
  }
}

/** Whether `params` gives `key` a value, as `prepare` would keep it (own, enumerable, not undefined). */
function hasField(params: object, key: string): boolean {
  return Object.prototype.propertyIsEnumerable.call(params, key) && (params as Record<string, unknown>)[key] !== undefined;
}

/** The fields of a request: checked against what `op` takes, Dates written as RFC 3339, undefined left out. */
function prepare(op: Operation, params: object): Record<string, unknown> {
  checkFields(op, params);
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    fields[key] = value instanceof Date ? value.toISOString() : value;
  }
  return fields;
}

function withPage<P extends { limit?: number; after?: string }>(params: P, pageSize: number | undefined, after: string | undefined): P {
  const next = { ...params, after };
  if (pageSize !== undefined) next.limit = pageSize;
  return next;
}

function checkResult(answer: Line): CheckResult {
  const result: CheckResult = { active: answer.active as boolean };
  if ('expiresAt' in answer) result.expiresAt = answer.expiresAt as string | null;
  return result;
}

function page<T>(items: T[], next: unknown): Page<T> {
  return typeof next === 'string' ? { items, next } : { items };
}

/** The answer without `ok` and `id`. */
function strip(answer: Line): Record<string, unknown> {
  const { ok: _ok, id: _id, ...rest } = answer;
  return rest;
}

/** The push handler of a connection that watches nothing. */
function ignorePush(): void {}

function checkMaxQueuedPushes(value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError('maxQueuedPushes: a whole number from 1');
  return value;
}
