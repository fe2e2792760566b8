// The change feed (PROTOCOL.md §6 changes): its typed pages, and a follower that reads it for as long as the
// application iterates. The follower reads on at once while a page says more changes are there (`next` below
// `newest`) and, once caught up, waits for the next change with a waiting read (`wait`), which holds up every
// line after it on its connection: so the follower has a connection of its own, as a watch does. A lost
// connection, a restart or a loading server is retried with backoff from the follower's position, the
// number up to which every change was delivered, so that nothing is skipped; the feed no longer reaching
// back there (`truncated`) ends it.

import { BackoffPolicy, jitteredBackoff, sleep } from './backoff.js';
import { Connection, Line } from './connection.js';
import { AbortError, isTransient } from './errors.js';
import { ChangesResult, FeedItem, FollowParams } from './types.js';

/** The longest `wait` the server takes, and a follower's default. */
export const MAX_WAIT_MS = 30_000;
/** How much longer than its `wait` a waiting read is given: the answer comes when `wait` is up, then travels. */
const WAIT_MARGIN_MS = 5000;

/** The timeout of a read that waits `wait` ms: `timeoutMs`, or `wait` + 5 s when longer; 0 (never) stays 0. */
export function waitingTimeout(timeoutMs: number, wait: number): number {
  return timeoutMs === 0 ? 0 : Math.max(timeoutMs, wait + WAIT_MARGIN_MS);
}

/** A `changes` answer, typed: its items get `raw`, fields a newer server adds are kept. */
export function changesResult(answer: Line): ChangesResult {
  const { ok: _ok, id: _id, changes, ...rest } = answer;
  const items = Array.isArray(changes) ? (changes as Record<string, unknown>[]) : [];
  return { ...(rest as Omit<ChangesResult, 'changes'>), changes: items.map(feedItem) };
}

/** The item itself, with `raw` (non-enumerable, so that it is left out of JSON and comparisons) naming it. */
function feedItem(item: Record<string, unknown>): FeedItem {
  Object.defineProperty(item, 'raw', { value: item, enumerable: false });
  return item as unknown as FeedItem;
}

/** Opens a connection of the client's pool for the follower alone. */
export type FollowOpener = (signal: AbortSignal) => Promise<{ connection: Connection }>;

/** @internal How a follower reads: set by `Client.follow` from its options. */
export interface FollowSettings {
  backoff: BackoffPolicy;
  /** Milliseconds for a read that does not wait (a waiting one gets `waitingTimeout`); 0 waits forever. */
  timeoutMs: number;
  /** The `wait` of a read once caught up, 1 to 30000. */
  waitMs: number;
  /** The `limit` of each read; the server's default (100) when absent. */
  pageSize?: number;
  signal?: AbortSignal;
}

/**
 * The items of the change feed after a change, oldest first, for as long as the application iterates
 * (`for await`); leaving the loop, or `close()`, stops it. It never ends by itself: it waits for the next
 * change when caught up, and retries lost connections, restarts and loading servers with backoff. It throws
 * `TruncatedError` when the feed no longer holds the changes after its position (take a copy with `export`
 * and follow after its `seq`), `ForbiddenError` without the admin role, and `AbortError` when its signal fires.
 */
export class ChangeFollower implements AsyncIterableIterator<FeedItem> {
  /** Whose changes it follows (and every erasure), when not everyone's. */
  readonly user: string | undefined;
  readonly device: string | undefined;

  private readonly opener: FollowOpener;
  private readonly onClose: () => void;
  private readonly settings: FollowSettings;
  private readonly items: AsyncGenerator<FeedItem, void, undefined>;
  private readonly stopper = new AbortController();
  private readonly onAbort = (): void => {
    this.abortReason = { reason: this.settings.signal?.reason };
    void this.close();
  };
  private positionValue: number;
  private newestValue: number | undefined;
  private connection: Connection | undefined;
  private closed = false;
  /** Set when the caller's signal fired, until the iteration has thrown the AbortError once. */
  private abortReason: { reason: unknown } | undefined;

  /** @internal Use `Client.follow`. */
  constructor(opener: FollowOpener, onClose: () => void, params: FollowParams, settings: FollowSettings) {
    this.opener = opener;
    this.onClose = onClose;
    this.settings = settings;
    this.user = params.user;
    this.device = params.device;
    this.positionValue = params.afterSeq ?? 0;
    this.items = this.read();
    if (settings.signal?.aborted) this.onAbort();
    else settings.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * The change up to which every item was delivered: store it once the application has handled the item it
   * was handed (with the copy it keeps), and follow from it after a restart (`afterSeq`). Nothing after it is
   * skipped; the items of the last change are delivered again when the application stopped among them. It
   * moves past the changes a subject follower leaves out, and to the page's `next` after its last item.
   */
  get position(): number {
    return this.positionValue;
  }

  /** The newest change the last page could show (`undefined` before the first): `newest - position` is the lag. */
  get newest(): number | undefined {
    return this.newestValue;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<FeedItem>> {
    if (this.abortReason !== undefined) return Promise.reject(this.takeAbort());
    return this.items.next();
  }

  async return(): Promise<IteratorResult<FeedItem>> {
    await this.close();
    return { value: undefined, done: true };
  }

  /** Stops following: a read in flight is dropped, its connection closed, and the iteration ends. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.stop();
    await this.items.return(undefined);
  }

  private async *read(): AsyncGenerator<FeedItem, void, undefined> {
    let failures = 0;
    // The first read waits too: it is answered at once when changes are there.
    let wait = this.settings.waitMs;
    while (!this.closed) {
      let page: ChangesResult;
      try {
        page = await this.readPage(wait);
        failures = 0;
      } catch (error) {
        if (this.closed) return this.stopped();
        this.connection?.destroy();
        this.connection = undefined;
        if (!isTransient(error)) {
          this.stop();
          throw error;
        }
        try {
          await sleep(jitteredBackoff(this.settings.backoff, ++failures), this.stopper.signal);
        } catch {
          return this.stopped();
        }
        continue;
      }
      this.newestValue = page.newest;
      const items = page.changes;
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        // Handed over from here on: the position covers the item's change unless more of its items follow
        // (a page never splits a change), and the whole page after its last item.
        if (i + 1 === items.length) this.positionValue = page.next;
        else if (items[i + 1].sequence !== item.sequence) this.positionValue = item.sequence;
        else this.positionValue = item.sequence - 1;
        yield item;
      }
      this.positionValue = page.next;
      wait = page.next < page.newest ? 0 : this.settings.waitMs;
    }
    return this.stopped();
  }

  private async readPage(wait: number): Promise<ChangesResult> {
    let connection = this.connection;
    if (connection === undefined || !connection.usable) {
      connection = (await this.opener(this.stopper.signal)).connection;
      if (this.closed) {
        connection.destroy();
        throw new AbortError('changes', false, undefined);
      }
      this.connection = connection;
    }
    const { timeoutMs, pageSize: limit } = this.settings;
    const fields = { afterSeq: this.positionValue, limit, wait: wait > 0 ? wait : undefined, user: this.user, device: this.device };
    const signal = this.stopper.signal;
    return changesResult(await connection.call('changes', fields, { timeoutMs: wait > 0 ? waitingTimeout(timeoutMs, wait) : timeoutMs, signal }));
  }

  /** What the iteration does once stopped: end, or throw the AbortError of the caller's signal. */
  private stopped(): void {
    if (this.abortReason !== undefined) throw this.takeAbort();
  }

  private takeAbort(): AbortError {
    const reason = this.abortReason?.reason;
    this.abortReason = undefined;
    return new AbortError('changes', false, reason);
  }

  private stop(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    this.settings.signal?.removeEventListener('abort', this.onAbort);
    this.stopper.abort();
    this.connection?.destroy();
    this.connection = undefined;
  }
}
