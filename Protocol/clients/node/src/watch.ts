// A watch as an async iterator of pushed lines, on a connection of its own (so that no request waits
// behind pushes) that survives reconnects: when the connection drops, the stream connects again with
// backoff, watches again, and yields a `gap` event (changes between two times were not pushed) before the
// next push. Pushes are read as they arrive and queued, up to `maxQueuedPushes` not yet taken by the
// application: then the stream stops reading its connection (backpressure) until the application takes
// one. The server holds what it sends meanwhile; when 4 MiB are left unread it closes the connection, and
// the stream reconnects (once the application has made room) and yields a gap, as after any drop.

import { BackoffPolicy, jitteredBackoff, sleep } from './backoff.js';
import { Connection, Line } from './connection.js';
import { ConnectionClosedError, isTransient } from './errors.js';
import { AccessEvent, WatchEvent, WatchTarget } from './types.js';

/** Opens a connection of the client's pool that sends its pushed lines to `onPush`. */
export type WatchOpener = (onPush: (line: Line) => void, signal?: AbortSignal) => Promise<{ connection: Connection }>;

const UNWATCH_TIMEOUT_MS = 1000;
/** The default of `maxQueuedPushes`. */
export const DEFAULT_MAX_QUEUED_PUSHES = 10_000;

/**
 * The pushes of one or more watch targets. Iterate it with `for await`; leaving the loop (or `close()`)
 * unwatches and closes its connection. The iteration throws when the stream cannot go on (its token was
 * refused on reconnecting, say); it never ends by itself otherwise.
 */
export class WatchStream implements AsyncIterableIterator<WatchEvent> {
  /** What this stream watches. */
  readonly targets: readonly WatchTarget[];

  private readonly opener: WatchOpener;
  private readonly onClose: () => void;
  private readonly backoff: BackoffPolicy;
  private readonly timeoutMs: number;
  private readonly maxQueued: number;
  private readonly queue: WatchEvent[] = [];
  /** Whether reading `connection` is paused because the queue is full. */
  private paused = false;
  /**
   * When reading this connection was first paused: from then on the server may have held pushes back, and
   * if the connection is lost, the gap starts there (the client cannot tell when the server caught up).
   */
  private behindSince: Date | undefined;
  /** Set while a reconnect waits for the application to make room in the queue. */
  private onRoom: (() => void) | undefined;
  private readonly waiters: { resolve: (result: IteratorResult<WatchEvent>) => void; reject: (error: Error) => void }[] = [];
  private connection: Connection | undefined;
  /** Pushes of a new connection that came before its watches were all answered: they follow the gap. */
  private held: Line[] | undefined;
  private failure: Error | undefined;
  private done = false;
  private readonly stopper = new AbortController();

  /** @internal Use `Client.watch`. */
  constructor(
    opener: WatchOpener, onClose: () => void, targets: readonly WatchTarget[], backoff: BackoffPolicy, timeoutMs: number,
    maxQueuedPushes = DEFAULT_MAX_QUEUED_PUSHES,
  ) {
    this.opener = opener;
    this.onClose = onClose;
    this.targets = targets;
    this.backoff = backoff;
    this.timeoutMs = timeoutMs;
    this.maxQueued = maxQueuedPushes;
  }

  /**
   * The events received and not yet taken by `next()`: at most `maxQueuedPushes` (the connection is not read
   * while it is full), but for the gap and the pushes that come while a reconnect's watches are answered.
   */
  get queued(): number {
    return this.queue.length;
  }

  /** @internal Opens the connection and sends the watches; rejects with the server's refusal. */
  async start(): Promise<this> {
    try {
      await this.attach();
    } catch (error) {
      this.done = true;
      throw error;
    }
    this.release();
    return this;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<WatchEvent>> {
    const event = this.queue.shift();
    if (event !== undefined) {
      if (this.queue.length < this.maxQueued) this.madeRoom();
      return Promise.resolve({ value: event, done: false });
    }
    if (this.failure !== undefined) {
      const failure = this.failure;
      this.failure = undefined;
      return Promise.reject(failure);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  async return(): Promise<IteratorResult<WatchEvent>> {
    await this.close();
    return { value: undefined, done: true };
  }

  /** Unwatches, closes the stream's connection and ends the iteration. */
  async close(): Promise<void> {
    if (this.done) return;
    this.done = true;
    this.onClose();
    this.stopper.abort();
    this.onRoom?.();
    const connection = this.connection;
    this.connection = undefined;
    if (this.paused) connection?.resumeReading(); // to read the answer to unwatch (the pushes are dropped)
    this.paused = false;
    if (connection?.usable) {
      await connection.call('unwatch', {}, { timeoutMs: UNWATCH_TIMEOUT_MS }).catch(() => undefined);
      await connection.close();
    }
    this.finish(undefined);
  }

  private async attach(): Promise<void> {
    this.held = [];
    let opened: Connection | undefined;
    const { connection } = await this.opener((line) => this.receive(opened, line), this.stopper.signal);
    opened = connection;
    this.connection = connection;
    this.paused = false;
    try {
      for (const target of this.targets) {
        await connection.call('watch', target, { timeoutMs: this.timeoutMs, signal: this.stopper.signal });
      }
    } catch (error) {
      connection.destroy();
      throw error;
    }
    void connection.closed.then((reason) => this.lost(connection, reason));
  }

  private receive(connection: Connection | undefined, line: Line): void {
    if (this.done || (connection !== undefined && connection !== this.connection)) return;
    if (this.held !== undefined) this.held.push(line);
    else this.deliverPush(line);
  }

  /** Pushes the held lines after the watches were answered (and after the gap, on a reconnect). */
  private release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const line of held) this.deliverPush(line);
    this.pauseIfFull();
  }

  private deliverPush(line: Line): void {
    if (line.push !== 'access') return; // a kind of push a newer server adds, which this client does not know
    const event: AccessEvent = { kind: 'access', cause: line.cause as AccessEvent['cause'], membership: line.membership as AccessEvent['membership'] };
    if (typeof line.sequence === 'number') event.sequence = line.sequence;
    this.deliver(event);
  }

  private deliver(event: WatchEvent): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve({ value: event, done: false });
      return;
    }
    this.queue.push(event);
    this.pauseIfFull();
  }

  /** A full queue stops the reading (not while the watches of a new connection wait for their answers). */
  private pauseIfFull(): void {
    if (this.queue.length >= this.maxQueued && !this.paused && this.held === undefined && this.connection !== undefined) {
      this.paused = true;
      this.behindSince ??= new Date();
      this.connection.pauseReading();
    }
  }

  /** The application took an event and the queue has room: read again, or let a waiting reconnect go on. */
  private madeRoom(): void {
    if (this.paused) {
      this.paused = false;
      this.connection?.resumeReading(); // may fill the queue and pause again at once
    }
    const onRoom = this.onRoom;
    this.onRoom = undefined;
    onRoom?.();
  }

  private finish(failure: Error | undefined): void {
    if (!this.done) this.onClose();
    this.done = true;
    const waiters = this.waiters.splice(0);
    for (const waiter of waiters) {
      if (failure !== undefined) waiter.reject(failure);
      else waiter.resolve({ value: undefined, done: true });
    }
    if (failure !== undefined && waiters.length === 0) this.failure = failure;
  }

  /** The connection dropped: connect again with backoff until watching again, then tell of the gap. */
  private async lost(connection: Connection, reason: Error | undefined): Promise<void> {
    if (this.done || connection !== this.connection) return;
    // Lost while behind, the pushes the server held back (and those read but not handled) are lost with
    // it: the gap starts when the stream first stopped reading.
    const from = this.behindSince ?? new Date();
    this.behindSince = undefined;
    const cause = reason ?? new ConnectionClosedError('the watch connection was closed');
    this.connection = undefined;
    this.paused = false;
    // Reconnecting while the application takes nothing would only fill the new connection's buffers too.
    if (this.queue.length >= this.maxQueued) await new Promise<void>((resolve) => (this.onRoom = resolve));
    for (let failures = 1; !this.done; failures++) {
      try {
        await sleep(jitteredBackoff(this.backoff, failures), this.stopper.signal);
        await this.attach();
        this.deliver({ kind: 'gap', from, to: new Date(), error: cause });
        this.release();
        return;
      } catch (error) {
        if (this.done) return;
        if (!isTransient(error)) {
          this.finish(error as Error);
          return;
        }
      }
    }
  }
}
