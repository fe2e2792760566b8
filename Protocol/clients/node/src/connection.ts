// One connection to one node: framing, pipelining and matching answers to requests.
//
// The server answers a connection's lines in order (PROTOCOL.md §1 Framing), so the connection keeps a
// FIFO of the requests in flight and gives each answer line to the oldest. Typed calls carry an `id` from a
// per-connection counter and their answer must carry it back; anything else is a protocol error that fails
// every request in flight and closes the connection. A line with `push` answers nothing: it goes to
// `onPush`. A request that times out or is cancelled fails at once but keeps its place in the FIFO, and its
// answer is dropped when it comes, so the connection stays usable.

import * as net from 'node:net';
import * as tls from 'node:tls';
import { readFileSync } from 'node:fs';
import { Address, NodeAddress, parseAddress } from './address.js';
import {
  AbortError, ConnectError, ConnectionClosedError, EntitledError, ProtocolError, TimeoutError, errorFromResponse,
} from './errors.js';
import { Fifo } from './fifo.js';
import { isWriteOperation } from './operations.js';

/** A line the server sent, as parsed JSON. */
export type Line = Record<string, unknown>;

/** TLS settings. The system's trusted CAs are used unless `ca`/`caFile` names others. */
export interface TlsOptions {
  /** PEM file of the CA (or the self-signed certificate) to trust instead of the system's. */
  caFile?: string;
  /** PEM text of the CA(s) to trust instead of the system's. */
  ca?: string | string[];
  /** The name the certificate must be issued for; default: the node's host. */
  servername?: string;
}

export interface ConnectionOptions {
  /** Speak TLS: `true` trusts the system's CAs; an object names a CA file or the server name. */
  tls?: boolean | TlsOptions;
  /** Sent as `{"op":"auth"}` first on the connection. Never logged, never put in an error. */
  token?: string;
  /** Milliseconds to open the connection (TCP, TLS and `auth`). Default 5000. */
  connectTimeoutMs?: number;
  /** Receives every pushed line (`{"push":...}`) of the connection. */
  onPush?: (line: Line) => void;
  /**
   * Receives an answer line that comes while no request is in flight, such as the `busy` line the server
   * sends to a connection beyond its limit. Without it, such an error line marks the connection failed.
   */
  onUnsolicited?: (line: Line) => void;
}

/** Per-call settings of a connection. */
export interface CallOptions {
  /** Milliseconds to wait for the answer; 0 or absent waits forever. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

interface Pending {
  /** The id the answer must carry; `undefined` for raw requests, which are matched by position only. */
  readonly id: number | undefined;
  readonly op: string | undefined;
  readonly resolve: (line: Line) => void;
  readonly reject: (error: Error) => void;
  /** Whether a typed call's error answer rejects (typed) or resolves (raw). */
  readonly raw: boolean;
  settled: boolean;
  written: boolean;
  /** `Date.now()` at which it times out; 0 for never. */
  deadline: number;
  timeoutMs: number;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** Text waiting to be written, and the requests whose answers it asks for. */
interface Outgoing {
  text: string;
  entries: Pending[];
  /** A typed call whose time ran out (or was cancelled) before it was written is not written at all. */
  droppable: boolean;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

/**
 * One connection. Open it with `Connection.open`; the `Client` pool manages these for you, and the raw
 * methods (`request`, `writeRaw`) are for tools that speak the protocol line by line.
 */
export class Connection {
  /** The address this connection goes to (`host:port` or a socket path). */
  readonly address: string;
  /** Settles when the connection is closed: with the reason it was lost, or `undefined` when closed by `close()`. */
  readonly closed: Promise<Error | undefined>;

  private readonly socket: net.Socket;
  private readonly onPush?: (line: Line) => void;
  private readonly onUnsolicited?: (line: Line) => void;
  private readonly inFlight = new Fifo<Pending>();
  private outgoing: Outgoing[] = [];
  private flushScheduled = false;
  private partial = '';
  private nextId = 1;
  private open = true;
  private closing = false;
  /** An error line that came unasked (`busy`, `tls_required`): the reason of the close that follows. */
  private failure: EntitledError | undefined;
  private resolveClosed!: (reason: Error | undefined) => void;
  // One timer for every request's deadline, set for the earliest (a timer per request would cost more than
  // the rest of a pipelined call): when it fires it fails the requests due and is set for the next.
  private deadlineTimer: NodeTimeout | undefined;
  private timerAt = Infinity;

  private constructor(socket: net.Socket, address: string, options: ConnectionOptions) {
    this.socket = socket;
    this.address = address;
    this.onPush = options.onPush;
    this.onUnsolicited = options.onUnsolicited;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    socket.setEncoding('utf8'); // decodes UTF-8 across chunk boundaries
    socket.on('data', (chunk) => this.receive(chunk));
    socket.on('error', (error) => this.lose(new ConnectionClosedError(`the connection to ${address} failed: ${error.message}`, undefined, false, { cause: error })));
    socket.on('close', () => this.lose(new ConnectionClosedError(`the connection to ${address} was closed by the server`)));
  }

  /**
   * Opens a connection, over TLS when `options.tls` says so, and authenticates it with `options.token`.
   * Fails with `ConnectError` (naming the address and the reason) or with the server's answer to `auth`.
   */
  static async open(node: NodeAddress | Address, options: ConnectionOptions = {}): Promise<Connection> {
    const address = typeof node === 'object' && 'kind' in node ? node : parseAddress(node);
    const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const socket = await connectSocket(address, options.tls, timeoutMs);
    const connection = new Connection(socket, address.text, options);
    if (options.token !== undefined) {
      try {
        await connection.call('auth', { token: options.token }, { timeoutMs });
      } catch (error) {
        connection.destroy();
        throw error;
      }
    }
    return connection;
  }

  /** Whether requests can be sent: open, not closing, and not refused by the server. */
  get usable(): boolean {
    return this.open && !this.closing && this.failure === undefined;
  }

  /** Requests sent or queued whose answer has not come yet (timed-out ones included until it does). */
  get pending(): number {
    return this.inFlight.length + this.outgoing.length;
  }

  /**
   * Sends `{"op": op, "id": <next>, ...fields}` and resolves with the success answer, or rejects with the
   * error of an error answer (`NotFoundError`, ...), `TimeoutError`, `AbortError` or `ConnectionClosedError`.
   */
  call(op: string, fields: object, options: CallOptions = {}): Promise<Line> {
    return new Promise((resolve, reject) => this.send(op, fields, options, resolve, reject));
  }

  /** `call` with callbacks instead of a Promise (one Promise less per call, for the pool's busy path). */
  send(op: string, fields: object, options: CallOptions, onAnswer: (line: Line) => void, onError: (error: Error) => void): void {
    const id = this.nextId++;
    const body = JSON.stringify(fields);
    const head = `{"op":${JSON.stringify(op)},"id":${id}`;
    const text = body === '{}' ? `${head}}\n` : `${head},${body.slice(1)}\n`;
    this.enqueue(text, id, op, false, options, onAnswer, onError);
  }

  /**
   * Sends `request` exactly as given (its own `id`, or none) and resolves with the answer line, an error
   * answer included: the answer is matched by position, not by id.
   */
  request(request: Record<string, unknown>, options: CallOptions = {}): Promise<Line> {
    const op = typeof request.op === 'string' ? request.op : undefined;
    return new Promise((resolve, reject) => this.enqueue(JSON.stringify(request) + '\n', undefined, op, true, options, resolve, reject));
  }

  /**
   * Writes `text` exactly (UTF-8). Returns one promise per line the text ends (each `\n`), resolving with the
   * answer to that line: the server answers every line once, in order; a line started by an earlier call
   * and ended here is answered here.
   */
  writeRaw(text: string): Promise<Line>[] {
    const promises: Promise<Line>[] = [];
    const entries: Pending[] = [];
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
      promises.push(new Promise<Line>((resolve, reject) => {
        entries.push({ id: undefined, op: undefined, resolve, reject, raw: true, settled: false, written: false, deadline: 0, timeoutMs: 0 });
      }));
    }
    if (!this.usable) {
      const error = this.failure ?? new ConnectionClosedError(`the connection to ${this.address} is closed`);
      for (const entry of entries) entry.reject(error);
      return promises;
    }
    this.outgoing.push({ text, entries, droppable: false });
    this.scheduleFlush();
    return promises;
  }

  /**
   * Closes the connection once what was written is answered: ends the sending side; the server answers the
   * requests it read, then closes. Resolves when it is closed.
   */
  async close(): Promise<void> {
    if (!this.open) return;
    this.flush();
    this.closing = true;
    this.socket.end();
    const timer = setTimeout(() => this.destroy(), 2000).unref();
    await this.closed;
    clearTimeout(timer);
  }

  /** Closes at once; every request in flight fails with `ConnectionClosedError`. */
  destroy(): void {
    if (!this.open) return;
    this.closing = true;
    this.lose(undefined);
    this.socket.destroy();
  }

  private enqueue(
    text: string, id: number | undefined, op: string | undefined, raw: boolean, options: CallOptions,
    resolve: (line: Line) => void, reject: (error: Error) => void,
  ): void {
    if (!this.usable) {
      reject(this.failure ?? new ConnectionClosedError(`the connection to ${this.address} is closed`, op));
      return;
    }
    const { timeoutMs, signal } = options;
    const entry: Pending = { id, op, resolve, reject, raw, settled: false, written: false, deadline: 0, timeoutMs: timeoutMs ?? 0 };
    if (signal !== undefined) {
      if (signal.aborted) {
        reject(new AbortError(op, false, signal.reason));
        return;
      }
      entry.signal = signal;
      entry.onAbort = () => this.expire(entry, new AbortError(op, entry.written && isWriteOperation(op), signal.reason));
      signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    if (timeoutMs !== undefined && timeoutMs > 0) {
      entry.deadline = Date.now() + timeoutMs;
      if (entry.deadline < this.timerAt) this.armDeadlineTimer(entry.deadline);
    }
    this.outgoing.push({ text, entries: [entry], droppable: !raw });
    this.scheduleFlush();
  }

  /** Fails a request whose time ran out or that was cancelled; its place in the FIFO stays. */
  private expire(entry: Pending, error: EntitledError): void {
    if (entry.settled) return;
    this.settle(entry);
    entry.reject(error);
  }

  private settle(entry: Pending): void {
    entry.settled = true;
    if (entry.onAbort !== undefined) entry.signal?.removeEventListener('abort', entry.onAbort);
  }

  private armDeadlineTimer(at: number): void {
    clearTimeout(this.deadlineTimer);
    this.timerAt = at;
    this.deadlineTimer = setTimeout(() => this.expireDue(), Math.max(at - Date.now(), 0));
  }

  /** Fails the requests whose deadline has passed, and sets the timer for the next deadline. */
  private expireDue(): void {
    this.deadlineTimer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    let next = Infinity;
    const waiting = [...this.inFlight, ...this.outgoing.flatMap((item) => item.entries)];
    for (const entry of waiting) {
      if (entry.settled || entry.deadline === 0) continue;
      if (entry.deadline <= now) {
        const applied = entry.written && isWriteOperation(entry.op);
        this.expire(entry, new TimeoutError(`no answer to ${entry.op ?? 'the request'} from ${this.address} within ${entry.timeoutMs} ms`, entry.op, applied));
      } else if (entry.deadline < next) {
        next = entry.deadline;
      }
    }
    if (next !== Infinity && this.open) this.armDeadlineTimer(next);
  }

  // Writes are gathered until the microtasks of the current job have run, so that the calls made while
  // handling one batch of answers (each answer's continuation making the next call) go out in one write
  // (one system call, one TCP segment) instead of one each.
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.outgoing.length === 0 || !this.open) return;
    const batch = this.outgoing;
    this.outgoing = [];
    let text = '';
    for (const item of batch) {
      if (item.droppable && item.entries[0].settled) continue; // never sent: certainly not applied
      text += item.text;
      for (const entry of item.entries) {
        entry.written = true;
        this.inFlight.push(entry);
      }
    }
    if (text) this.socket.write(text);
  }

  private receive(chunk: string): void {
    let start = 0;
    let text = chunk;
    if (this.partial) {
      text = this.partial + chunk;
      this.partial = '';
    }
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      this.handleLine(text.slice(start, end));
      start = end + 1;
      if (!this.open) return;
    }
    if (start < text.length) this.partial = text.slice(start);
  }

  private handleLine(text: string): void {
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      this.breakDown(`the server sent a line that is not JSON: ${text.slice(0, 200)}`);
      return;
    }
    if (line === null || typeof line !== 'object' || Array.isArray(line)) {
      this.breakDown(`the server sent a line that is not an object: ${text.slice(0, 200)}`);
      return;
    }
    const object = line as Line;
    if ('push' in object && !('ok' in object)) {
      this.onPush?.(object);
      return;
    }
    const entry = this.inFlight.shift();
    if (entry === undefined) {
      this.unsolicited(object);
      return;
    }
    if (entry.settled) return; // the answer to a request that timed out or was cancelled
    if (entry.raw) {
      this.settle(entry);
      entry.resolve(object);
      return;
    }
    // An error line without id answers the line it could not read (too_large), or refuses the whole
    // connection (busy, tls_required): either way it belongs to the oldest request.
    const idMatches = object.id === entry.id || (!('id' in object) && object.ok === false);
    if (!idMatches || (object.ok !== true && object.ok !== false)) {
      this.inFlight.push(entry); // fail it with the others
      this.breakDown(`the answer ${text.slice(0, 200)} does not answer request id ${entry.id} (${entry.op})`);
      return;
    }
    this.settle(entry);
    if (object.ok === true) entry.resolve(object);
    else {
      const error = errorFromResponse(object, entry.op);
      if (error.code === 'busy' || error.code === 'tls_required') this.failure = error;
      entry.reject(error);
    }
  }

  private unsolicited(line: Line): void {
    if (this.onUnsolicited !== undefined) {
      this.onUnsolicited(line);
    } else if (line.ok === false) {
      this.failure = errorFromResponse(line);
    } else {
      this.breakDown(`the server sent an answer while no request was waiting: ${JSON.stringify(line).slice(0, 200)}`);
    }
  }

  /** A line the protocol does not allow: nothing more on this connection can be trusted. */
  private breakDown(message: string): void {
    const entries = [...this.inFlight.drain(), ...this.outgoing.flatMap((item) => item.entries)];
    this.outgoing = [];
    for (const entry of entries) {
      if (entry.settled) continue;
      this.settle(entry);
      entry.reject(new ProtocolError(message, entry.op, entry.written && isWriteOperation(entry.op)));
    }
    this.destroy();
  }

  /** The connection is gone: fails what waits, with the reason. `undefined` means closed on purpose. */
  private lose(reason: ConnectionClosedError | undefined): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.deadlineTimer);
    const entries = [...this.inFlight.drain(), ...this.outgoing.flatMap((item) => item.entries)];
    this.outgoing = [];
    for (const entry of entries) {
      if (entry.settled) continue;
      this.settle(entry);
      if (this.failure !== undefined) {
        entry.reject(this.failure);
        continue;
      }
      const applied = entry.written && isWriteOperation(entry.op);
      const what = reason?.message ?? `the connection to ${this.address} was closed by the client`;
      const tail = applied ? ': it may have been applied' : '';
      entry.reject(new ConnectionClosedError(`${what} before ${entry.op ?? 'the request'} was answered${tail}`, entry.op, applied, { cause: reason?.cause }));
    }
    this.resolveClosed(this.failure ?? reason);
  }
}

/** Opens the socket (TCP, TLS or Unix), turning every failure into a `ConnectError` that says what to do. */
function connectSocket(address: Address, tlsOption: boolean | TlsOptions | undefined, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let socket: net.Socket;
    let secure = false;
    if (address.kind === 'unix') {
      socket = net.connect({ path: address.path });
    } else if (tlsOption) {
      const settings = typeof tlsOption === 'object' ? tlsOption : {};
      let ca = settings.ca;
      if (settings.caFile !== undefined) {
        try {
          ca = readFileSync(settings.caFile, 'utf8');
        } catch (error) {
          reject(new ConnectError(address.text, `cannot read the TLS CA file ${settings.caFile}: ${(error as Error).message}`, { fatal: true, cause: error }));
          return;
        }
      }
      const servername = settings.servername ?? (net.isIP(address.host) ? undefined : address.host);
      socket = tls.connect({ host: address.host, port: address.port, servername, ca, minVersion: 'TLSv1.2' });
      secure = true;
    } else {
      socket = net.connect({ host: address.host, port: address.port });
    }
    const timer = setTimeout(() => {
      done();
      socket.destroy();
      reject(new ConnectError(address.text, `no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = (): void => {
      done();
      socket.setNoDelay(true);
      resolve(socket);
    };
    const onError = (error: NodeSystemError): void => {
      done();
      socket.destroy();
      reject(describeConnectError(address, error, secure));
    };
    const onClose = (): void => {
      done();
      reject(new ConnectError(address.text, secure ? 'the server closed the connection during the TLS handshake' : 'the server closed the connection'));
    };
    function done(): void {
      clearTimeout(timer);
      socket.removeListener(secure ? 'secureConnect' : 'connect', onReady);
      socket.removeListener('error', onError);
      socket.removeListener('close', onClose);
    }
    socket.once(secure ? 'secureConnect' : 'connect', onReady);
    socket.once('error', onError);
    socket.once('close', onClose);
  });
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED',
]);

function describeConnectError(address: Address, error: NodeSystemError, secure: boolean): ConnectError {
  const code = error.code ?? '';
  const at = address.text;
  if (secure && (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(error.message))) {
    return new ConnectError(at, `the server at ${at} does not speak TLS on this port (create the client without the tls option)`, { fatal: true, cause: error });
  }
  if (UNTRUSTED.has(code)) {
    const self = code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ? 'it is self-signed, so signed by an unknown CA' : 'it is signed by an unknown CA';
    return new ConnectError(at, `the server's certificate is not trusted: ${self} (pass the certificate of the CA that signed it with tls: { caFile })`, { fatal: true, cause: error });
  }
  if (code === 'CERT_HAS_EXPIRED') {
    return new ConnectError(at, "the server's certificate has expired (renew it on the server)", { fatal: true, cause: error });
  }
  if (code === 'CERT_NOT_YET_VALID') {
    return new ConnectError(at, "the server's certificate is not valid yet (check both machines' clocks, or reissue it)", { fatal: true, cause: error });
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return new ConnectError(at, `the server's certificate is not issued for ${address.kind === 'tcp' ? address.host : at} (connect with the name it was issued for, or set tls: { servername }): ${error.message}`, { fatal: true, cause: error });
  }
  if (code === 'ECONNREFUSED') return new ConnectError(at, 'connection refused (is entitled running there?)', { cause: error });
  if (code === 'ENOENT') return new ConnectError(at, 'no socket file at this path (is entitled running with --socket?)', { cause: error });
  return new ConnectError(at, secure ? `the TLS handshake failed: ${error.message}` : error.message, { cause: error });
}
