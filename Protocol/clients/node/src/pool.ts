// The connections of a client: `connectionsPerNode` to each node, opened when first needed and opened again
// after they drop. A node that fails to connect is skipped for a backoff (50 ms doubling to 2 s, full
// jitter; OPERATIONS.md "Clients of several nodes"), so a node that is down costs no wait while another
// is up; only when every node fails does a request fail, with NoNodeAvailableError naming each failure.

import { Address } from './address.js';
import { BackoffPolicy, jitteredBackoff, sleep } from './backoff.js';
import { Connection, ConnectionOptions, Line } from './connection.js';
import { ClientClosedError, ConnectError, NoNodeAvailableError } from './errors.js';

interface NodeState {
  readonly address: Address;
  failures: number;
  /** `Date.now()` before which the node is not tried again. */
  blockedUntil: number;
  lastError?: Error;
}

export interface Slot {
  /** The node this slot's connection goes to first; it returns there whenever it is opened again. */
  readonly home: number;
  node: number;
  connection?: Connection;
  opening?: Promise<Lease>;
}

/** A connection lent for one request, and the index of its node. */
export interface Lease {
  readonly connection: Connection;
  readonly node: number;
}

export interface PoolOptions {
  connectionsPerNode: number;
  backoff: BackoffPolicy;
  connection: ConnectionOptions;
}

export class Pool {
  readonly nodes: readonly NodeState[];
  private readonly slots: Slot[] = [];
  private readonly options: PoolOptions;
  private readonly dedicated = new Set<Connection>();
  private next = 0;
  private closed = false;

  constructor(addresses: readonly Address[], options: PoolOptions) {
    this.options = options;
    this.nodes = addresses.map((address) => ({ address, failures: 0, blockedUntil: 0 }));
    // Connection i goes to node (s + i) mod n, s random per pool, so that the pools of many processes
    // spread over the nodes.
    const start = Math.floor(Math.random() * addresses.length);
    const count = addresses.length * options.connectionsPerNode;
    for (let i = 0; i < count; i++) {
      const home = (start + i) % addresses.length;
      this.slots.push({ home, node: home });
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * An open connection not on an excluded node, the least busy, without waiting; opens the missing ones in
   * the background. `undefined` when none is open.
   */
  pickOpen(exclude?: ReadonlySet<number>): Lease | undefined {
    const slot = this.pickOpenSlot(exclude);
    return slot === undefined ? undefined : { connection: slot.connection as Connection, node: slot.node };
  }

  /**
   * `pickOpen` without the Lease object, for the client's call path: read the slot's `connection` (set)
   * and `node` at once, since both change when the slot is opened again.
   */
  pickOpenSlot(exclude?: ReadonlySet<number>): Slot | undefined {
    const count = this.slots.length;
    if (count === 1 && exclude === undefined) {
      // One connection (the default): nothing to compare.
      const slot = this.slots[0];
      if (slot.connection !== undefined && slot.connection.usable) return slot;
    }
    let best: Slot | undefined;
    let bestPending = Infinity;
    let missing = false;
    // Start at a rotating slot so that equally busy connections share the requests.
    for (let k = 0; k < count; k++) {
      const slot = this.slots[(this.next + k) % count];
      const connection = slot.connection;
      if (connection === undefined || !connection.usable) {
        if (connection !== undefined) slot.connection = undefined;
        if (slot.opening === undefined) missing = true;
        continue;
      }
      if (exclude?.has(slot.node)) continue;
      const pending = connection.pending;
      if (pending < bestPending) {
        best = slot;
        bestPending = pending;
        if (pending === 0) break;
      }
    }
    if (best === undefined) return undefined;
    this.next = (this.next + 1) % count;
    if (missing && !this.closed) this.openMissing();
    return best;
  }

  /** A connection, opening one when none is open (to a node not excluded, when `exclude` is given). */
  async acquire(exclude?: ReadonlySet<number>, signal?: AbortSignal): Promise<Lease> {
    if (this.closed) throw new ClientClosedError();
    const open = this.pickOpen(exclude);
    if (open !== undefined) return open;
    if (exclude === undefined || exclude.size === 0) {
      const opening = this.slots.find((slot) => slot.opening !== undefined)?.opening;
      if (opening !== undefined) return opening;
    }
    const free = this.slots.find((slot) => slot.connection === undefined && slot.opening === undefined)
      ?? this.slots.find((slot) => slot.connection === undefined || !slot.connection.usable);
    if (free === undefined) {
      // Every connection is open, on excluded nodes: a request sent again needs another node.
      throw new NoNodeAvailableError(this.nodes.map((node, index) => ({
        address: node.address.text,
        error: new Error(exclude?.has(index) ? 'already tried for this request' : node.lastError?.message ?? 'no free connection'),
      })));
    }
    return this.openSlot(free, exclude, signal);
  }

  /** Stops handing out `connection` (the server is about to close it) and lets its answers come in. */
  retire(connection: Connection): void {
    for (const slot of this.slots) {
      if (slot.connection === connection) slot.connection = undefined;
    }
    void connection.close();
  }

  /** Opens a connection outside the slots (for a watch), with its own push handler. */
  async openDedicated(onPush: (line: Line) => void, signal?: AbortSignal): Promise<Lease> {
    if (this.closed) throw new ClientClosedError();
    const start = Math.floor(Math.random() * this.nodes.length);
    const lease = await this.openConnection(start, undefined, { ...this.options.connection, onPush }, signal);
    this.dedicated.add(lease.connection);
    void lease.connection.closed.then(() => this.dedicated.delete(lease.connection));
    return lease;
  }

  /** Opens every slot's connection now (instead of at first use). */
  async connectAll(signal?: AbortSignal): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.connection?.usable ? undefined : slot.opening ?? this.openSlot(slot, undefined, signal)));
  }

  /** Closes every connection, letting the requests in flight be answered first. */
  async close(): Promise<void> {
    this.closed = true;
    const connections = [...this.dedicated];
    for (const slot of this.slots) {
      if (slot.connection !== undefined) connections.push(slot.connection);
      slot.connection = undefined;
    }
    await Promise.all(connections.map((connection) => connection.close()));
  }

  private openMissing(): void {
    for (const slot of this.slots) {
      if (slot.connection === undefined && slot.opening === undefined) {
        // The requests go to the open connections meanwhile; a failure here only marks the node.
        this.openSlot(slot).catch(() => undefined);
      }
    }
  }

  private openSlot(slot: Slot, exclude?: ReadonlySet<number>, signal?: AbortSignal): Promise<Lease> {
    const opening = this.openConnection(slot.home, exclude, this.options.connection, signal).then((lease) => {
      if (this.closed) {
        lease.connection.destroy();
        throw new ClientClosedError();
      }
      slot.connection = lease.connection;
      slot.node = lease.node;
      return lease;
    });
    slot.opening = opening;
    const clear = (): void => {
      if (slot.opening === opening) slot.opening = undefined;
    };
    opening.then(clear, clear);
    return opening;
  }

  /**
   * Connects to `preferred`, else to the next nodes in turn, skipping excluded nodes and those backing off.
   * When every candidate is backing off, waits for the first to be due. Errors that are not a node's fault
   * (an untrusted certificate, a refused token, `loading`) are thrown at once.
   */
  private async openConnection(preferred: number, exclude: ReadonlySet<number> | undefined, options: ConnectionOptions, signal?: AbortSignal): Promise<Lease> {
    const n = this.nodes.length;
    const failures: { address: string; error: Error }[] = [];
    for (;;) {
      let dueAt = Infinity;
      let tried = false;
      for (let k = 0; k < n; k++) {
        const index = (preferred + k) % n;
        if (exclude?.has(index)) continue;
        const node = this.nodes[index];
        const now = Date.now();
        if (node.blockedUntil > now) {
          dueAt = Math.min(dueAt, node.blockedUntil);
          continue;
        }
        tried = true;
        try {
          const connection = await Connection.open(node.address, options);
          node.failures = 0;
          node.blockedUntil = 0;
          return { connection, node: index };
        } catch (error) {
          if (!(error instanceof ConnectError) || error.fatal) throw error;
          node.failures++;
          node.blockedUntil = Date.now() + jitteredBackoff(this.options.backoff, node.failures);
          node.lastError = error;
          failures.push({ address: node.address.text, error });
        }
      }
      if (tried || dueAt === Infinity) {
        for (let index = 0; index < n; index++) {
          const node = this.nodes[index];
          if (exclude?.has(index) || failures.some((f) => f.address === node.address.text)) continue;
          failures.push({ address: node.address.text, error: node.lastError ?? new Error('not tried') });
        }
        throw new NoNodeAvailableError(failures);
      }
      await sleep(dueAt - Date.now(), signal);
    }
  }
}
