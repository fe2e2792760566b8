// Waiting between attempts: exponential backoff with full jitter, and a sleep that a signal can cut short.

import { AbortError } from './errors.js';

/** Reconnection backoff: the n-th failure in a row waits a random time up to `min(max, initial * 2^(n-1))`. */
export interface BackoffPolicy {
  /** Milliseconds of the first backoff's bound. Default 50. */
  initialMs: number;
  /** The bound's ceiling, in milliseconds. Default 2000. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ initialMs: 50, maxMs: 2000 });

/** The bound of the backoff after `failures` failures in a row (1 or more). */
export function backoffCeiling(policy: BackoffPolicy, failures: number): number {
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}

/** A random wait in [0, ceiling]: "full jitter", so that clients that failed together do not return together. */
export function jitteredBackoff(policy: BackoffPolicy, failures: number): number {
  return Math.random() * backoffCeiling(policy, failures);
}

/** Resolves after `ms`, or rejects with AbortError when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(new AbortError(undefined, false, signal.reason));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortError(undefined, false, signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
