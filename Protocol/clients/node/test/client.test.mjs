// The client against one real server (shared by these tests; every id is unique per test): typed calls,
// pipelining, pages, read-your-writes, watch, the Unix socket and the errors of real answers.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  BadRequestError, Client, Connection, ConflictError, NotFoundError, StaleError, createClient,
} from '../dist/index.js';
import { startServer, stopServer } from './helpers/server.mjs';

let server;
let client;
let unique = 0;
const id = (name) => `${name}-${process.pid}-${++unique}`;

before(async () => {
  server = await startServer({ socket: true, args: ['--min-seq-wait', '200'] });
  client = createClient({ nodes: [server.address] });
});
after(async () => {
  await client.close();
  await stopServer(server);
});

/** Resolves with the next event of a watch stream, or fails after `ms`. */
async function nextEvent(iterator, ms = 5000) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no watch event within ${ms} ms`)), ms)));
  try {
    const result = await Promise.race([iterator.next(), timeout]);
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}

describe('typed operations', () => {
  test('grant, check, claim, revoke, extend, event, customer, erase', async () => {
    const [user, device, product, entitlement] = [id('u'), id('d'), id('p'), id('e')];
    const defined = await client.define({ entitlement, products: [product, product] });
    assert.deepEqual(defined.products, [product]);
    assert.equal(typeof defined.seq, 'number');
    assert.deepEqual((await client.catalog())[entitlement], [product]);

    const guest = await client.grant({ device, product, duration: '30d', source: 'app_store' });
    assert.equal(guest.membership.device, device);
    assert.equal(guest.idempotentReplay, false);
    assert.deepEqual(await client.check({ device, entitlement }), { active: true, expiresAt: guest.membership.expiresAt });
    assert.equal((await client.claim({ device, user })).claimed, 1);
    assert.equal((await client.check({ user, product })).active, true);
    assert.deepEqual(await client.check({ user: id('nobody') }), { active: false });

    const extended = await client.extend({ membership: guest.membership.id, expiresAt: new Date(Date.parse(guest.membership.expiresAt) + 86_400_000) });
    assert.equal(extended.previousExpiresAt, guest.membership.expiresAt);

    const event = await client.event({ membership: guest.membership.id, type: 'cancellation', eventId: id('evt'), eventTime: new Date() });
    assert.equal(event.applied, true);
    assert.equal(event.membership.status, 'canceled');

    const customer = await client.customer({ user });
    assert.deepEqual(customer.activeProducts, [product]);
    assert.equal(customer.entitlements[entitlement].membership, guest.membership.id);

    const revoked = await client.revoke({ membership: guest.membership.id, reason: 'refund' });
    assert.equal(revoked.membership.status, 'revoked');
    const erased = await client.erase({ user, device, reason: 'test' });
    assert.equal(erased.erased.memberships, 1);
    assert.equal((await client.undefine({ entitlement })).entitlement, entitlement);
  });

  test('idempotent grant replays; another grant with the key is a conflict', async () => {
    const [user, key] = [id('u'), id('key')];
    const first = await client.grant({ user, product: 'p', idempotencyKey: key });
    const replay = await client.grant({ user, product: 'p', idempotencyKey: key });
    assert.equal(replay.idempotentReplay, true);
    assert.equal(replay.membership.id, first.membership.id);
    await assert.rejects(client.grant({ user, product: 'other', idempotencyKey: key }), (error) => {
      assert.ok(error instanceof ConflictError);
      assert.equal(error.mayHaveBeenApplied, false);
      assert.equal(error.op, 'grant');
      return true;
    });
  });

  test('hello, ping, stats, snapshot', async () => {
    const hello = await client.hello();
    assert.equal(hello.protocol, 5);
    assert.ok(hello.operations.includes('extend'));
    await client.ping();
    const stats = await client.stats();
    assert.ok(stats.requests.byOp.hello >= 1);
    assert.equal(typeof (await client.snapshot()).sequence, 'number');
  });

  test('a field the operation does not take throws before anything is sent', async () => {
    await assert.rejects(client.check({ user: 'u', duration: '30d' }), /check does not take "duration"/);
    await assert.rejects(client.grant({ user: 'u', product: 'p', entitlment: 'x' }), TypeError);
  });

  test('error answers are thrown as their class, with the operation', async () => {
    await assert.rejects(client.check({ user: id('u'), entitlement: id('missing') }), (error) => error instanceof NotFoundError && error.op === 'check');
    await assert.rejects(client.grant({ user: id('u'), product: 'p', duration: '15m' }), (error) => {
      assert.ok(error instanceof BadRequestError);
      assert.match(error.serverMessage, /min/);
      assert.equal(error.response.ok, false);
      return true;
    });
  });

  test('raw request returns error answers and keeps the caller id', async () => {
    const answer = await client.request({ op: 'check', id: 'mine', user: id('u'), entitlement: id('missing') });
    assert.equal(answer.ok, false);
    assert.equal(answer.id, 'mine');
    assert.equal(answer.error.code, 'not_found');
  });
});

describe('pipelining', () => {
  test('1000 requests in flight on one connection, answered in order', async () => {
    const connection = await Connection.open(server.address);
    const user = id('u');
    await connection.call('grant', { user, product: 'p' });
    const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => i % 2 ? connection.call('ping', {}) : connection.call('check', { user })));
    assert.equal(answers.length, 1000);
    answers.forEach((answer, i) => assert.equal(answer.active, i % 2 ? undefined : true));
    await connection.close();
  });

  test('the pool sends 1000 concurrent calls over its one connection', async () => {
    const pooled = createClient({ nodes: [server.address] });
    const before = (await client.stats()).connections.accepted;
    const results = await Promise.all(Array.from({ length: 1000 }, () => pooled.check({ user: id('u') })));
    assert.ok(results.every((result) => result.active === false));
    const accepted = (await client.stats()).connections.accepted;
    assert.equal(accepted - before, 1);
    await pooled.close();
  });
});

describe('pages', () => {
  test('memberships and history iterators follow next to the end', async () => {
    const user = id('u');
    const granted = [];
    for (let i = 0; i < 5; i++) granted.push((await client.grant({ user, product: `p${i}` })).membership.id);
    const first = await client.memberships({ user, limit: 2 });
    assert.equal(first.items.length, 2);
    assert.equal(typeof first.next, 'string');
    const all = [];
    for await (const membership of client.membershipsIterator({ user }, { pageSize: 2 })) all.push(membership.id);
    assert.deepEqual(all, granted.reverse());
    const entries = [];
    for await (const entry of client.historyIterator({ user }, { pageSize: 3 })) entries.push(entry.action);
    assert.deepEqual(entries, ['grant', 'grant', 'grant', 'grant', 'grant']);
    const last = await client.memberships({ user, limit: 5 });
    assert.equal(last.next, undefined);
  });
});

describe('read your writes', () => {
  test('lastSeq follows the writes; minSeq beyond it is stale', async () => {
    const user = id('u');
    const grant = await client.grant({ user, product: 'p' });
    assert.equal(client.lastSeq, grant.seq);
    const other = createClient({ nodes: [server.address] });
    assert.equal((await other.check({ user, minSeq: client.lastSeq })).active, true);
    await assert.rejects(other.check({ user, minSeq: client.lastSeq + 1_000_000 }), StaleError);
    await other.close();
  });

  test('readYourWrites sends lastSeq as minSeq on reads', async () => {
    const reader = createClient({ nodes: [server.address], readYourWrites: true });
    const user = id('u');
    await reader.grant({ user, product: 'p' });
    assert.ok(reader.lastSeq > 0);
    assert.equal((await reader.check({ user })).active, true);
    // A minSeq given explicitly wins over lastSeq: this one is beyond every change, so stale.
    await assert.rejects(reader.customer({ user, minSeq: reader.lastSeq + 1_000_000 }), StaleError);
    await reader.close();
  });
});

describe('watch', () => {
  test('pushes of a user as an async iterator; closing unwatches', async () => {
    const user = id('u');
    const stream = await client.watch({ user });
    const granted = await client.grant({ user, product: 'p' });
    const event = await nextEvent(stream);
    assert.equal(event.kind, 'access');
    assert.equal(event.cause, 'grant');
    assert.equal(event.membership.id, granted.membership.id);
    assert.equal(event.sequence, granted.seq);
    await client.revoke({ membership: granted.membership.id });
    let seen;
    for await (const next of stream) {
      seen = next;
      break; // leaving the loop closes the stream
    }
    assert.equal(seen.cause, 'revoke');
    assert.deepEqual(await stream.next(), { value: undefined, done: true });
  });

  test('a watch not read queues at most maxQueuedPushes and stops reading; the rest come in order', async () => {
    const user = id('u');
    const bound = 10;
    const stream = await client.watch({ user }, { maxQueuedPushes: bound });
    try {
      // Another connection (the client's pool) grants 200 times while the test takes nothing.
      const grants = [];
      let most = 0;
      for (let i = 0; i < 200; i++) {
        grants.push(await client.grant({ user, product: `p${i}` }));
        most = Math.max(most, stream.queued);
      }
      await new Promise((resolve) => setTimeout(resolve, 300)); // the pushes in the sockets would have come by now
      most = Math.max(most, stream.queued);
      assert.ok(most <= bound, `the watch queued ${most} pushes, more than its bound ${bound}`);
      assert.equal(stream.queued, bound);

      // Reading: every grant's push, in order, up to the last (after a gap if the server cut the connection).
      const order = new Map(grants.map((granted, index) => [granted.membership.id, index]));
      const last = grants.at(-1).membership.id;
      let previous = -1;
      let afterGap = false;
      for (;;) {
        const event = await nextEvent(stream);
        if (event.kind === 'gap') {
          afterGap = true;
          continue;
        }
        assert.ok(afterGap || stream.queued <= bound, `${stream.queued} queued while reading`);
        assert.equal(event.cause, 'grant');
        const index = order.get(event.membership.id);
        assert.ok(index !== undefined && index > previous, `push of grant ${index} after grant ${previous}`);
        if (!afterGap) assert.equal(index, previous + 1, 'no push is skipped without a gap');
        assert.equal(event.sequence, grants[index].seq);
        previous = index;
        if (event.membership.id === last) break;
      }
    } finally {
      await stream.close();
    }
  });

  test('a watch the server refuses rejects', async () => {
    await assert.rejects(client.watch({}), BadRequestError);
  });
});

describe('unix socket', () => {
  test('a node given as a socket path', async () => {
    const local = new Client({ nodes: [server.socketPath] });
    await local.ping();
    assert.equal((await local.hello()).protocol, 5);
    await local.close();
  });
});
