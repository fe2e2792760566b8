// Every error this client raises: one class per protocol error code, and the client's own failures.
//
// Each error says whether a write it belongs to MAY HAVE BEEN APPLIED (PROTOCOL.md §3, "What an answer
// means"): `mayHaveBeenApplied` is true only for a write (grant, claim, revoke, extend, define, undefine,
// event, erase, snapshot, or a raw request) answered `outcome_unknown` or `internal`, answered with a code
// this client does not know, or whose bytes were written before the connection was lost, the answer was
// garbled, or its time ran out. Everything else is certainly not applied, and a read never applies anything.

import { isWriteOperation } from './operations.js';

/** What the server sent with a `loading` error: memberships loaded so far, and known to come. */
export interface LoadingProgress {
  loaded: number;
  total: number;
}

/** The base of every error of this package. `code` is the protocol's error code, or the client's own. */
export abstract class EntitledError extends Error {
  /** The protocol's error code (`not_found`, ...), or one of the client's (`connection_closed`, ...). */
  abstract readonly code: string;
  /** The operation the error belongs to, when it belongs to one. */
  readonly op: string | undefined;
  /**
   * Whether the write this error belongs to may have been carried out. When true, retry it with the same
   * idempotency key (`grant`'s `idempotencyKey`, `event`'s `eventId`; `claim` and `revoke` are safe to repeat
   * as they are, `extend` with `expiresAt` too), or read to find out. When false, nothing was applied, so a
   * retry cannot make a duplicate. Always false for reads.
   */
  readonly mayHaveBeenApplied: boolean;

  protected constructor(message: string, op: string | undefined, mayHaveBeenApplied: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.op = op;
    this.mayHaveBeenApplied = mayHaveBeenApplied;
  }
}

// MARK: Error answers of the server

/** The `error` object of an error answer. */
export interface ErrorBody {
  code: string;
  message: string;
  loaded?: number;
  total?: number;
}

/** An error answer (`{"ok":false,...}`) of the server. The subclass tells the code. */
export abstract class ServerError extends EntitledError {
  /** The server's sentence for a person; its wording is not part of the contract. */
  readonly serverMessage: string;
  /** The whole answer line, for logging and for fields a newer server adds. */
  readonly response: Record<string, unknown>;

  constructor(response: Record<string, unknown>, op?: string, mayHaveBeenApplied = false) {
    const body = errorBody(response);
    super(`${body.code}: ${body.message}${op ? ` (${op})` : ''}`, op, mayHaveBeenApplied);
    this.serverMessage = body.message;
    this.response = response;
  }
}

/** The line was not valid JSON. */
export class BadJsonError extends ServerError {
  readonly code = 'bad_json';
}
/** Valid JSON, but not a valid request (a field missing, of the wrong type, out of range...). */
export class BadRequestError extends ServerError {
  readonly code = 'bad_request';
}
/** The `op` names no operation of this server. */
export class UnknownOpError extends ServerError {
  readonly code = 'unknown_op';
}
/** A membership or entitlement that does not exist. */
export class NotFoundError extends ServerError {
  readonly code = 'not_found';
}
/** An idempotency key used for another grant, a purchase another owner keeps, an extend that cannot be. */
export class ConflictError extends ServerError {
  readonly code = 'conflict';
}
/** The line exceeded the server's line limit; the server closed the connection. */
export class TooLargeError extends ServerError {
  readonly code = 'too_large';
}
/** The connection has not authenticated (no or a refused token), or the token was unknown. */
export class UnauthorizedError extends ServerError {
  readonly code = 'unauthorized';
}
/** The token's role may not run this operation. */
export class ForbiddenError extends ServerError {
  readonly code = 'forbidden';
}
/** The server is at its connection limit and closed the connection. Retry later. */
export class BusyError extends ServerError {
  readonly code = 'busy';
}
/** The port speaks TLS: create the client with the `tls` option. */
export class TlsRequiredError extends ServerError {
  readonly code = 'tls_required';
  constructor(response: Record<string, unknown>, op?: string) {
    super(response, op);
    this.message = `${this.message}: this port speaks TLS, create the client with the tls option (tls: true, or tls: { caFile })`;
  }
}
/** The server failed; a write may or may not have been carried out. */
export class InternalError extends ServerError {
  readonly code = 'internal';
}
/** The server takes no writes now (disk full or failed, or a cluster node sure it did not commit). */
export class UnavailableError extends ServerError {
  readonly code = 'unavailable';
}
/** A read with `minSeq` for a change the server had not applied in time. Retry, here or on another node. */
export class StaleError extends ServerError {
  readonly code = 'stale';
}
/** A write whose fate the server cannot tell yet. Retry with the same idempotency key, or read. */
export class OutcomeUnknownError extends ServerError {
  readonly code = 'outcome_unknown';
}
/** A read over more than 10000 memberships of one subject, or a 17th watch of every subject. */
export class OverLimitError extends ServerError {
  readonly code = 'over_limit';
}
/** The server is still loading its data; the client waited `loadingWait` before giving up. */
export class LoadingError extends ServerError {
  readonly code = 'loading';
  /** Memberships loaded so far, and known to come. */
  readonly progress: LoadingProgress;
  constructor(response: Record<string, unknown>, op?: string) {
    super(response, op);
    const body = errorBody(response);
    this.progress = { loaded: body.loaded ?? 0, total: body.total ?? 0 };
  }
}
/**
 * A read of the change feed asked for changes after a number the feed no longer holds: its retention let them
 * go, or a failover of a cluster's database lost that number. Asking again cannot help: take a full copy with
 * `export` (`Client.openExport`), then follow the feed after the copy's `seq`.
 */
export class TruncatedError extends ServerError {
  readonly code = 'truncated';
}
/** A code this client does not know (from a newer server). Taken as "may have been applied" for writes. */
export class UnknownCodeError extends ServerError {
  readonly code: string;
  constructor(response: Record<string, unknown>, op?: string) {
    super(response, op, isWriteOperation(op));
    this.code = errorBody(response).code;
  }
}

type ServerErrorClass = new (response: Record<string, unknown>, op?: string, mayHaveBeenApplied?: boolean) => ServerError;

/** The class of each protocol error code (response.schema.json `$defs/errorCode`). */
export const ERROR_CLASSES: Readonly<Record<string, ServerErrorClass>> = Object.freeze({
  bad_json: BadJsonError,
  bad_request: BadRequestError,
  unknown_op: UnknownOpError,
  not_found: NotFoundError,
  conflict: ConflictError,
  too_large: TooLargeError,
  unauthorized: UnauthorizedError,
  forbidden: ForbiddenError,
  busy: BusyError,
  tls_required: TlsRequiredError,
  internal: InternalError,
  unavailable: UnavailableError,
  stale: StaleError,
  outcome_unknown: OutcomeUnknownError,
  over_limit: OverLimitError,
  loading: LoadingError,
  truncated: TruncatedError,
});

/** The codes that leave a write's outcome unknown (PROTOCOL.md §3, "What an answer means"). */
const OUTCOME_UNKNOWN_CODES = new Set(['outcome_unknown', 'internal']);

/** The error of an error answer to `op`. */
export function errorFromResponse(response: Record<string, unknown>, op?: string): ServerError {
  const code = errorBody(response).code;
  const known = Object.prototype.hasOwnProperty.call(ERROR_CLASSES, code) ? ERROR_CLASSES[code] : undefined;
  if (known === undefined) return new UnknownCodeError(response, op);
  return new known(response, op, OUTCOME_UNKNOWN_CODES.has(code) && isWriteOperation(op));
}

function errorBody(response: Record<string, unknown>): ErrorBody {
  const error = response.error as Partial<ErrorBody> | undefined;
  return {
    code: typeof error?.code === 'string' ? error.code : 'unknown',
    message: typeof error?.message === 'string' ? error.message : '(no message)',
    loaded: typeof error?.loaded === 'number' ? error.loaded : undefined,
    total: typeof error?.total === 'number' ? error.total : undefined,
  };
}

// MARK: The client's own errors

/** A connection could not be opened: refused, unreachable, timed out, or TLS could not be set up. */
export class ConnectError extends EntitledError {
  readonly code = 'connect_failed';
  /** The address tried (`host:port` or a socket path). */
  readonly address: string;
  /** Why, in words. */
  readonly reason: string;
  /** True when trying another node cannot help (an untrusted certificate, TLS against a plain port). */
  readonly fatal: boolean;
  constructor(address: string, reason: string, options?: { cause?: unknown; op?: string; fatal?: boolean }) {
    super(`cannot connect to ${address}: ${reason}`, options?.op, false, options);
    this.address = address;
    this.reason = reason;
    this.fatal = options?.fatal ?? false;
  }
}

/** Every node failed to give a connection; `failures` names each node's reason. */
export class NoNodeAvailableError extends EntitledError {
  readonly code = 'no_node_available';
  readonly failures: ReadonlyArray<{ address: string; error: Error }>;
  constructor(failures: ReadonlyArray<{ address: string; error: Error }>, op?: string) {
    const list = failures.map((f) => `${f.address}: ${f.error instanceof ConnectError ? f.error.reason : f.error.message}`);
    super(`no node available (${list.join('; ')})`, op, false);
    this.failures = failures;
  }
}

/** The connection closed (or was closed) before the answer came. */
export class ConnectionClosedError extends EntitledError {
  readonly code = 'connection_closed';
  constructor(message: string, op?: string, mayHaveBeenApplied = false, options?: { cause?: unknown }) {
    super(message, op, mayHaveBeenApplied, options);
  }
}

/** No answer came within the request's `timeoutMs`. The connection stays usable. */
export class TimeoutError extends EntitledError {
  readonly code = 'timeout';
  constructor(message: string, op?: string, mayHaveBeenApplied = false) {
    super(message, op, mayHaveBeenApplied);
  }
}

/** The request's AbortSignal fired before the answer came (`cause` is the signal's reason). */
export class AbortError extends EntitledError {
  readonly code = 'cancelled';
  constructor(op: string | undefined, mayHaveBeenApplied: boolean, reason: unknown) {
    super(`${op ?? 'the request'} was cancelled`, op, mayHaveBeenApplied, { cause: reason });
  }
}

/** The server sent a line the protocol does not allow (not JSON, or an answer with another id). */
export class ProtocolError extends EntitledError {
  readonly code = 'protocol_error';
  constructor(message: string, op?: string, mayHaveBeenApplied = false) {
    super(message, op, mayHaveBeenApplied);
  }
}

/**
 * Whether coming back later can cure `error`: the node down or restarting (the connection refused, lost or
 * timed out), loading, or full. What a stream that survives reconnects (a watch, a change follower) retries
 * with backoff; anything else ends it.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof ConnectError) return !error.fatal;
  return error instanceof NoNodeAvailableError || error instanceof ConnectionClosedError || error instanceof TimeoutError
    || error instanceof LoadingError || error instanceof BusyError;
}

/** The client was closed with `close()`. */
export class ClientClosedError extends EntitledError {
  readonly code = 'client_closed';
  constructor(op?: string) {
    super('the client is closed', op, false);
  }
}
