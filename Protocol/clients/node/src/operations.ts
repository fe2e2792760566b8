// The operations of protocol version 5 and the fields each takes (PROTOCOL.md §2 and §6), which the
// client checks before sending: the server refuses a field an operation does not take, and a typo must
// never reach it. test/schema.test.mjs keeps these tables equal to Protocol/schema/*.schema.json.

/** Every operation of protocol version 5, and the fields each takes besides `op` and `id`. */
export const OPERATION_FIELDS = Object.freeze({
  ping: [],
  hello: [],
  grant: [
    'user', 'device', 'product', 'plan', 'source', 'expiresAt', 'duration', 'reason', 'transactionId',
    'originalTransactionId', 'willRenew', 'periodType', 'environment', 'ownership', 'grantType', 'idempotencyKey',
    'purchasedAt', 'renewsCount',
  ],
  check: ['user', 'device', 'product', 'entitlement', 'at', 'minSeq'],
  claim: ['user', 'device', 'reason'],
  revoke: ['membership', 'reason'],
  extend: ['membership', 'duration', 'expiresAt', 'reason'],
  memberships: [
    'user', 'device', 'source', 'at', 'transactionId', 'originalTransactionId', 'limit', 'minSeq', 'after', 'endedAfter',
  ],
  define: ['entitlement', 'products', 'reason'],
  undefine: ['entitlement', 'reason'],
  catalog: [],
  snapshot: [],
  event: [
    'membership', 'type', 'eventId', 'eventTime', 'expiresAt', 'gracePeriodExpiresAt', 'product', 'transactionId', 'reason',
  ],
  customer: ['user', 'device', 'minSeq'],
  history: ['user', 'device', 'entitlement', 'erasures', 'limit', 'after'],
  watch: ['user', 'device', 'all'],
  unwatch: ['user', 'device', 'all'],
  auth: ['token'],
  stats: [],
  reload: [],
  erase: ['user', 'device', 'reason'],
} as const);

/** The name of an operation of protocol version 5. */
export type Operation = keyof typeof OPERATION_FIELDS;

/**
 * Reads: sent again on another connection (at most once per node) when their connection drops or times
 * out, since asking twice changes nothing.
 */
export const READ_OPERATIONS: ReadonlySet<string> = new Set([
  'check', 'memberships', 'customer', 'catalog', 'history', 'hello', 'ping', 'stats',
]);

/**
 * Operations that may change the server's state, so that a lost answer leaves their outcome unknown. Never
 * sent twice by the client. `snapshot` writes a file; a raw request (no known op) counts as one too.
 */
const CHANGING_OPERATIONS: ReadonlySet<string> = new Set([
  'grant', 'claim', 'revoke', 'extend', 'define', 'undefine', 'event', 'erase', 'snapshot', 'reload',
]);

/** Whether a failure of `op` after its bytes were written may leave a change behind. */
export function isWriteOperation(op: string | undefined): boolean {
  if (op === undefined) return true;
  if (CHANGING_OPERATIONS.has(op)) return true;
  return !Object.prototype.hasOwnProperty.call(OPERATION_FIELDS, op);
}

/**
 * How the client offers each operation: the `Client` method that sends it, or, for the operations that
 * belong to a connection rather than to a call, where the client sends them.
 */
export const OPERATION_METHODS: Readonly<Record<Operation, string>> = Object.freeze({
  ping: 'ping',
  hello: 'hello',
  grant: 'grant',
  check: 'check',
  claim: 'claim',
  revoke: 'revoke',
  extend: 'extend',
  memberships: 'memberships',
  define: 'define',
  undefine: 'undefine',
  catalog: 'catalog',
  snapshot: 'snapshot',
  event: 'event',
  customer: 'customer',
  history: 'history',
  watch: 'watch',
  unwatch: 'WatchStream.close',
  auth: 'the token option (sent first on every new connection)',
  stats: 'stats',
  reload: 'reload',
  erase: 'erase',
});

/** Checks the fields given to `op` before anything is sent; a field the operation does not take throws. */
export function checkFields(op: Operation, fields: object): void {
  const allowed: readonly string[] = OPERATION_FIELDS[op];
  for (const key of Object.keys(fields)) {
    if (!allowed.includes(key)) {
      const takes = allowed.length ? allowed.join(', ') : 'no fields';
      throw new TypeError(`${op} does not take "${key}"; it takes ${takes}`);
    }
  }
}
