// The few Node.js APIs this package uses, declared by hand.
//
// Why not @types/node: the package must build offline with Debian's packages only (node-typescript), and
// Debian ships no @types/node; no npm registry is reachable either. So this file declares exactly the
// parts of node:net, node:tls, node:fs and the globals (timers, AbortController) that the sources call, with
// the signatures Node 20 documents. It is an ambient file: tsc does not emit it, and the public API
// (dist/*.d.ts) refers to none of its Node types, so a consumer's own @types/node never meets them
// (AbortSignal is the standard global every Node and DOM typing declares alike).

declare module 'node:net' {
  interface NetConnectOptions {
    host?: string;
    port?: number;
    path?: string;
    noDelay?: boolean;
  }
  class Socket {
    readonly destroyed: boolean;
    write(data: string): boolean;
    end(): this;
    destroy(error?: Error): this;
    setNoDelay(noDelay?: boolean): this;
    setEncoding(encoding: 'utf8'): this;
    pause(): this;
    resume(): this;
    on(event: 'data', listener: (chunk: string) => void): this;
    on(event: 'connect' | 'secureConnect' | 'end' | 'close', listener: () => void): this;
    on(event: 'error', listener: (error: NodeSystemError) => void): this;
    once(event: 'connect' | 'secureConnect' | 'end' | 'close', listener: () => void): this;
    once(event: 'error', listener: (error: NodeSystemError) => void): this;
    removeListener(event: string, listener: (...args: any[]) => void): this;
  }
  function connect(options: NetConnectOptions): Socket;
  function isIP(input: string): number;
}

declare module 'node:tls' {
  import { Socket } from 'node:net';
  interface ConnectionOptions {
    host?: string;
    port?: number;
    servername?: string;
    ca?: string | Array<string>;
    rejectUnauthorized?: boolean;
    minVersion?: 'TLSv1.2' | 'TLSv1.3';
  }
  class TLSSocket extends Socket {}
  function connect(options: ConnectionOptions): TLSSocket;
}

declare module 'node:fs' {
  function readFileSync(path: string, encoding: 'utf8'): string;
}

/** An error of Node's system calls or of its TLS layer: `code` names it (ECONNREFUSED, CERT_HAS_EXPIRED...). */
interface NodeSystemError extends Error {
  code?: string;
}

interface NodeTimeout {
  unref(): NodeTimeout;
}
declare function setTimeout(callback: () => void, ms?: number): NodeTimeout;
declare function clearTimeout(timeout: NodeTimeout | undefined): void;
declare function queueMicrotask(callback: () => void): void;

declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

interface AbortSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
