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

/**
 * Where the answer to a request goes: `answer` gets a success line (or, for a raw request, any line);
 * `fail` gets the error. The `Client` passes its call objects here, so that a call needs no closures.
 */
export interface Reply {
  answer(line: Line): void;
  fail(error: Error): void;
}

/**
 * A request queued or written. A class with every field set in the constructor, so that all entries share
 * one hidden class and the accesses on the answer path stay monomorphic.
 */
class Pending {
  /** The id the answer must carry; `undefined` for raw requests, which are matched by position only. */
  readonly id: number | undefined;
  readonly op: string | undefined;
  /** The bytes to write for it: its line (for `writeRaw`, the text up to the end of its line). */
  readonly text: string;
  readonly reply: Reply;
  /** Whether a typed call's error answer rejects (typed) or resolves (raw). */
  readonly raw: boolean;
  /** False for the text of a `writeRaw` that ends no line: written, but nothing answers it. */
  readonly answered: boolean;
  settled = false;
  written = false;
  /** `Date.now()` at which it times out; 0 for never. */
  deadline = 0;
  readonly timeoutMs: number;
  signal: AbortSignal | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;

  constructor(id: number | undefined, op: string | undefined, text: string, reply: Reply, raw: boolean, answered: boolean, timeoutMs: number) {
    this.id = id;
    this.op = op;
    this.text = text;
    this.reply = reply;
    this.raw = raw;
    this.answered = answered;
    this.timeoutMs = timeoutMs;
  }
}

/** `{"op":"<op>","id":` for each operation name seen, so that a typed line costs no JSON.stringify of its op. */
const LINE_HEADS = new Map<string, string>();

function lineHead(op: string): string {
  let head = LINE_HEADS.get(op);
  if (head === undefined) {
    head = `{"op":${JSON.stringify(op)},"id":`;
    if (LINE_HEADS.size < 256) LINE_HEADS.set(op, head); // the protocol's ops, and a few a test makes up
  }
  return head;
}

/** The fields of `fields` as JSON members after a comma (`,"user":"alice"`), or `''` for none. */
export function fieldsText(fields: object): string {
  const body = JSON.stringify(fields);
  return body === '{}' ? '' : `,${body.slice(1, -1)}`;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
/**
 * A batch is written before the end of the turn once it holds this many requests and at least as many as
 * the server still has to answer. Writing everything at the end of the turn makes client and server take
 * turns: with 50 in flight the server got all 50 in one write, answered them in one, and each waited while
 * the other worked (1 read and 1 write per 50 checks, the event loop busy 57% of the time). Writing the
 * first half as soon as it is ready lets the server answer it while the client prepares the second half:
 * 2 writes per 50, the loop busy ~88%, ~1.7x the checks per second (bench/bench.mjs, 2 cores). The floor
 * of 25 keeps a system call's cost spread over many requests (a floor of 16 or 20 made 3 writes per 50,
 * and was slower; 32 left the halves uneven, and was slower too); with few calls in flight nothing changes.
 */
const EARLY_WRITE_AT = 25;

/** The reply of written text that ends no line: nothing answers it. */
const NO_REPLY: Reply = { answer: () => undefined, fail: () => undefined };

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
  /** Requests made since the last write, oldest first; written together by `flush`. */
  private outgoing: Pending[] = [];
  private flushScheduled = false;
  /** Text read but not yet handled: the start of a line, or (while reading is paused) whole lines too. */
  private partial = '';
  /** Set by `pauseReading`: no line is handled, and the socket is not read, until `resumeReading`. */
  private paused = false;
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
    const text = fieldsText(fields);
    return new Promise((resolve, reject) => this.sendFields(op, text, options.timeoutMs, options.signal, { answer: resolve, fail: reject }));
  }

  /** `call` with callbacks instead of a Promise. */
  send(op: string, fields: object, options: CallOptions, onAnswer: (line: Line) => void, onError: (error: Error) => void): void {
    this.sendFields(op, fieldsText(fields), options.timeoutMs, options.signal, { answer: onAnswer, fail: onError });
  }

  /**
   * @internal The `Client`'s way to send: `fields` is the request's members already written as JSON after a
   * comma (`,"user":"alice"`, see `fieldsText`), so that only the id is added here; the answer goes to `reply`.
   */
  sendFields(op: string, fields: string, timeoutMs: number | undefined, signal: AbortSignal | undefined, reply: Reply): void {
    const id = this.nextId++;
    // Plain concatenation: the parts are joined once, when `flush` writes the batch.
    this.enqueue(lineHead(op) + id + fields + '}\n', id, op, false, timeoutMs, signal, reply);
  }

  /**
   * Sends `request` exactly as given (its own `id`, or none) and resolves with the answer line, an error
   * answer included: the answer is matched by position, not by id.
   */
  request(request: Record<string, unknown>, options: CallOptions = {}): Promise<Line> {
    const op = typeof request.op === 'string' ? request.op : undefined;
    return new Promise((resolve, reject) => this.enqueue(JSON.stringify(request) + '\n', undefined, op, true, options.timeoutMs, options.signal, { answer: resolve, fail: reject }));
  }

  /**
   * Writes `text` exactly (UTF-8). Returns one promise per line the text ends (each `\n`), resolving with the
   * answer to that line: the server answers every line once, in order; a line started by an earlier call
   * and ended here is answered here.
   */
  writeRaw(text: string): Promise<Line>[] {
    const promises: Promise<Line>[] = [];
    const entries: Pending[] = [];
    let start = 0;
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) {
      const line = text.slice(start, at + 1);
      start = at + 1;
      promises.push(new Promise<Line>((resolve, reject) => {
        entries.push(new Pending(undefined, undefined, line, { answer: resolve, fail: reject }, true, true, 0));
      }));
    }
    if (start < text.length) {
      // The start of a line that a later write ends: written now, answered with that later line.
      entries.push(new Pending(undefined, undefined, text.slice(start), NO_REPLY, true, false, 0));
    }
    if (!this.usable) {
      const error = this.failure ?? new ConnectionClosedError(`the connection to ${this.address} is closed`);
      for (const entry of entries) entry.reply.fail(error);
      return promises;
    }
    for (const entry of entries) this.outgoing.push(entry);
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

  /**
   * @internal Stops handling lines and reading the socket (a watch whose queue is full): the line being
   * handled is the last until `resumeReading`; the rest of what was read waits here, and the server holds
   * what it sends next (the operating system's buffers, then its own, PROTOCOL.md Flow control).
   */
  pauseReading(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  /** @internal Handles the lines read while paused (until paused again), then reads the socket again. */
  resumeReading(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.partial.includes('\n')) this.receive('');
    if (!this.paused && this.open) this.socket.resume();
  }

  /** Closes at once; every request in flight fails with `ConnectionClosedError`. */
  destroy(): void {
    if (!this.open) return;
    this.closing = true;
    this.lose(undefined);
    this.socket.destroy();
  }

  private enqueue(
    text: string, id: number | undefined, op: string | undefined, raw: boolean,
    timeoutMs: number | undefined, signal: AbortSignal | undefined, reply: Reply,
  ): void {
    if (!this.usable) {
      reply.fail(this.failure ?? new ConnectionClosedError(`the connection to ${this.address} is closed`, op));
      return;
    }
    const entry = new Pending(id, op, text, reply, raw, true, timeoutMs ?? 0);
    // No listener unless a signal is given: adding and removing one costs more than the rest of a call.
    if (signal !== undefined) {
      if (signal.aborted) {
        reply.fail(new AbortError(op, false, signal.reason));
        return;
      }
      entry.signal = signal;
      entry.onAbort = () => this.expire(entry, new AbortError(op, entry.written && isWriteOperation(op), signal.reason));
      signal.addEventListener('abort', entry.onAbort, { once: true });
    }
    if (timeoutMs !== undefined && timeoutMs > 0) {
      // Only the earliest deadline has a timer (see deadlineTimer); a later one costs this Date.now().
      entry.deadline = Date.now() + timeoutMs;
      if (entry.deadline < this.timerAt) this.armDeadlineTimer(entry.deadline);
    }
    this.outgoing.push(entry);
    const queued = this.outgoing.length;
    if (queued >= EARLY_WRITE_AT && queued >= this.inFlight.length) this.flush(); // see EARLY_WRITE_AT
    else this.scheduleFlush();
  }

  /** Fails a request whose time ran out or that was cancelled; its place in the FIFO stays. */
  private expire(entry: Pending, error: EntitledError): void {
    if (entry.settled) return;
    this.settle(entry);
    entry.reply.fail(error);
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
    const waiting = [...this.inFlight, ...this.outgoing];
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
  // (one system call, one TCP segment) instead of one each; a large batch goes out in two (EARLY_WRITE_AT).
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.outgoing.length === 0 || !this.open) return;
    const batch = this.outgoing;
    let text = '';
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i];
      if (entry.settled && !entry.raw) continue; // a typed call cancelled before it was sent: certainly not applied
      text += entry.text;
      if (!entry.answered) continue;
      entry.written = true;
      this.inFlight.push(entry);
    }
    batch.length = 0; // the array is kept for the next batch
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
      if (this.paused) break; // the rest waits in `partial` for resumeReading
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
      entry.reply.answer(object);
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
    if (object.ok === true) entry.reply.answer(object);
    else {
      const error = errorFromResponse(object, entry.op);
      if (error.code === 'busy' || error.code === 'tls_required') this.failure = error;
      entry.reply.fail(error);
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
    const entries = [...this.inFlight.drain(), ...this.outgoing];
    this.outgoing = [];
    for (const entry of entries) {
      if (entry.settled) continue;
      this.settle(entry);
      entry.reply.fail(new ProtocolError(message, entry.op, entry.written && isWriteOperation(entry.op)));
    }
    this.destroy();
  }

  /** The connection is gone: fails what waits, with the reason. `undefined` means closed on purpose. */
  private lose(reason: ConnectionClosedError | undefined): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.deadlineTimer);
    const entries = [...this.inFlight.drain(), ...this.outgoing];
    this.outgoing = [];
    for (const entry of entries) {
      if (entry.settled) continue;
      this.settle(entry);
      if (this.failure !== undefined) {
        entry.reply.fail(this.failure);
        continue;
      }
      const applied = entry.written && isWriteOperation(entry.op);
      const what = reason?.message ?? `the connection to ${this.address} was closed by the client`;
      const tail = applied ? ': it may have been applied' : '';
      entry.reply.fail(new ConnectionClosedError(`${what} before ${entry.op ?? 'the request'} was answered${tail}`, entry.op, applied, { cause: reason?.cause }));
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
