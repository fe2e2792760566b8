// The change feed: `changes` pages and the follower, against real servers (a restart after kill -9, waits
// that time out, a subject's items, the feed's horizon) and fake ones (loading, a drop mid-read, abort).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AbortError, ForbiddenError, TruncatedError, createClient } from '../dist/index.js';
import { answer, fakeServer, freePort, startServer, stopServer, tempDir, writeAuthFile } from './helpers/server.mjs';

let unique = 0;
const id = (name) => `${name}-${process.pid}-${++unique}`;
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The next `count` items of a follower, or a failure naming what came when they do not come within `ms`. */
async function take(follower, count, ms = 20_000) {
  const items = [];
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${items.length} of ${count} feed items within ${ms} ms: ${items.map((i) => i.sequence)}`)), ms);
  });
  try {
    while (items.length < count) items.push((await Promise.race([follower.next(), timeout])).value);
    return items;
  } finally {
    clearTimeout(timer);
  }
}

/** Grants one lifetime membership to each user, one after the other; resolves with the changes' numbers. */
async function grantEach(client, users) {
  const seqs = [];
  for (const user of users) seqs.push((await client.grant({ user, product: 'p' })).seq);
  return seqs;
}

test('the follower delivers every change once and in order across a kill -9 and a restart on the same data directory', async () => {
  const port = await freePort();
  const dir = tempDir();
  let server = await startServer({ port, dir });
  const client = createClient({ nodes: [server.address] });
  const follower = client.follow({}, { pageSize: 5, waitMs: 1000 });
  try {
    const written = await grantEach(client, Array.from({ length: 20 }, () => id('before')));
    const seen = await take(follower, 20); // pages of 5, read on at once
    const rest = take(follower, 10); // caught up: a waiting read is in flight when the server dies
    await delay(100);
    await server.kill();
    await delay(300); // the follower retries a refused connection meanwhile
    server = await startServer({ port, dir });
    written.push(...(await grantEach(client, Array.from({ length: 10 }, () => id('after')))));
    seen.push(...(await rest));
    assert.deepEqual(seen.map((item) => item.sequence), written);
    assert.ok(seen.every((item) => item.action === 'grant' && item.membership.productId === 'p'));
    assert.equal(follower.position, written.at(-1));
  } finally {
    await follower.close();
    await client.close();
    await stopServer(server);
  }
});

describe('one server', () => {
  let server;
  let client;
  before(async () => {
    server = await startServer();
    client = createClient({ nodes: [server.address] });
    await client.grant({ user: id('first'), product: 'p' }); // lastSeq: where each test's follower starts
  });
  after(async () => {
    await client.close();
    await stopServer(server);
  });

  test('changes answers a typed page: items with raw, next, newest, oldestAfterSeq', async () => {
    const user = id('u');
    const start = client.lastSeq;
    const granted = await client.grant({ user, product: 'p', reason: 'welcome' });
    const revoked = await client.revoke({ membership: granted.membership.id, reason: 'refund' });
    const page = await client.changes({ afterSeq: start, limit: 1 });
    assert.deepEqual(page.changes.map((item) => [item.sequence, item.action]), [[granted.seq, 'grant']]);
    assert.equal(page.next, granted.seq);
    assert.ok(page.newest >= revoked.seq && page.oldestAfterSeq === 0);
    const [item] = page.changes;
    assert.equal(item.raw, item);
    assert.equal(JSON.parse(JSON.stringify(item)).raw, undefined);
    assert.deepEqual(item.membership, granted.membership);
    const rest = await client.changes({ afterSeq: page.next, user });
    assert.deepEqual(rest.changes.map((i) => [i.action, i.reason, i.membership.status]), [['revoke', 'refund', 'revoked']]);
  });

  test('a caught-up follower reads on after waits that time out, and misses nothing', async () => {
    const follower = client.follow({ afterSeq: client.lastSeq }, { waitMs: 200 });
    try {
      const written = await grantEach(client, [id('u'), id('u'), id('u')]);
      const seen = await take(follower, 3);
      const reads = (await client.stats()).requests.byOp.changes;
      const rest = take(follower, 3);
      await delay(1500); // several waits of 200 ms time out meanwhile
      assert.ok((await client.stats()).requests.byOp.changes - reads >= 2, 'the follower read again after its waits timed out');
      written.push(...(await grantEach(client, [id('u'), id('u'), id('u')])));
      seen.push(...(await rest));
      assert.deepEqual(seen.map((item) => item.sequence), written);
    } finally {
      await follower.close();
    }
  });

  test('a waiting follower or waiting read holds up none of the client\'s other calls', async () => {
    const follower = client.follow({ afterSeq: client.lastSeq }); // waits 30 s once caught up
    try {
      const pending = follower.next();
      const controller = new AbortController();
      const waiting = client.changes({ afterSeq: client.lastSeq, user: id('nobody'), wait: 20_000 }, { signal: controller.signal });
      await delay(100);
      await client.ping({ timeoutMs: 5000 });
      const granted = await client.grant({ user: id('u'), product: 'p' }, { timeoutMs: 5000 });
      assert.equal((await pending).value.sequence, granted.seq);
      controller.abort();
      await assert.rejects(waiting, AbortError); // it was still waiting for a change of its subject
    } finally {
      await follower.close();
    }
  });

  test('a subject follower sees its subject\'s changes and erasures only', async () => {
    const [user, other, device, entitlement] = [id('u'), id('other'), id('d'), id('e')];
    const follower = client.follow({ afterSeq: client.lastSeq, user }, { waitMs: 500 });
    try {
      const mine = await client.grant({ user, product: 'p' });
      await client.grant({ user: other, product: 'p' });
      await client.define({ entitlement, products: ['p'] }); // catalog changes are left out
      const guest = await client.grant({ device, product: 'p' }); // the device's, not yet the user's
      const claim = await client.claim({ device, user });
      const revoke = await client.revoke({ membership: mine.membership.id });
      const erase = await client.erase({ user: other }); // an erasure names no one: every follower gets it
      const last = await client.grant({ user, product: 'q' });
      const seen = await take(follower, 5);
      assert.deepEqual(seen.map((item) => [item.sequence, item.action]), [
        [mine.seq, 'grant'], [claim.seq, 'claim'], [revoke.seq, 'revoke'], [erase.seq, 'erase'], [last.seq, 'grant'],
      ]);
      assert.equal(seen[1].membership.id, guest.membership.id);
      assert.equal(seen[3].erasedMemberships.length, 1);
      assert.deepEqual(seen[3].detachedMemberships, []);
      assert.equal(follower.position, last.seq);
    } finally {
      await follower.close();
    }
  });
});

test('the follower ends with TruncatedError when started before the feed\'s horizon', async () => {
  const server = await startServer({ args: ['--feed-retention-changes', '4096', '--fsync', 'no'] });
  const client = createClient({ nodes: [server.address] });
  try {
    const total = 3 * 4096 + 100;
    for (let from = 0; from < total; from += 1000) {
      await Promise.all(Array.from({ length: Math.min(1000, total - from) }, (_, i) => client.grant({ user: `h${from + i}`, product: 'p' })));
    }
    const follower = client.follow({ afterSeq: 0 });
    await assert.rejects(follower.next(), (error) => {
      assert.ok(error instanceof TruncatedError);
      assert.equal(error.code, 'truncated');
      assert.equal(error.mayHaveBeenApplied, false);
      return true;
    });
    assert.deepEqual(await follower.next(), { value: undefined, done: true });
    assert.equal(follower.position, 0);
    await assert.rejects(client.changes({ afterSeq: 0 }), TruncatedError);
    // What the feed still holds is followed from its horizon on.
    const { oldestAfterSeq } = await client.changes({ afterSeq: client.lastSeq });
    assert.ok(oldestAfterSeq > 0);
    const fromHorizon = client.follow({ afterSeq: oldestAfterSeq });
    assert.equal((await fromHorizon.next()).value.sequence, oldestAfterSeq + 1);
    await fromHorizon.close();
  } finally {
    await client.close();
    await stopServer(server);
  }
});

test('the follower needs the admin role: ForbiddenError ends it', async () => {
  const dir = tempDir();
  const auth = writeAuthFile(dir, [{ name: 'app', token: 'writer-token-0123456789abcdef', role: 'writer' }]);
  const server = await startServer({ dir, args: ['--auth', auth] });
  const client = createClient({ nodes: [server.address], token: 'writer-token-0123456789abcdef' });
  try {
    await assert.rejects(client.follow().next(), ForbiddenError);
  } finally {
    await client.close();
    await stopServer(server);
  }
});

describe('against a fake feed', () => {
  const item = (sequence) => ({ time: '2026-01-01T00:00:00.000Z', actor: 'local', action: 'erase', sequence, erased: { memberships: 0, historyEntries: 0 }, erasedMemberships: [], detachedMemberships: [] });

  test('the follower waits out loading and a dropped read, reading again from the last item it delivered', async () => {
    const asked = [];
    let dropped = false;
    const fake = await fakeServer((request, socket, state) => {
      asked.push(request.afterSeq);
      if (state.connection === 1) {
        answer(socket, { ok: false, id: request.id, error: { code: 'loading', message: 'loading', loaded: 1, total: 2 } });
        setTimeout(() => socket.end(), 20);
      } else if (request.afterSeq === 1 && !dropped) {
        dropped = true;
        socket.destroy(); // the read is lost without an answer
      } else if (request.afterSeq < 3) {
        const sequence = request.afterSeq + 1;
        answer(socket, { ok: true, id: request.id, changes: [item(sequence)], next: sequence, newest: 3, oldestAfterSeq: 0 });
      } // caught up: a waiting read, held
    });
    const client = createClient({ nodes: [fake.address], backoff: { initialMs: 10, maxMs: 50 } });
    const follower = client.follow({}, { waitMs: 100 });
    try {
      assert.deepEqual((await take(follower, 3)).map((i) => i.sequence), [1, 2, 3]);
      assert.deepEqual(asked, [0, 0, 1, 1, 2]);
      assert.equal(follower.position, 3);
    } finally {
      await follower.close();
      await client.close();
      await fake.close();
    }
  });

  test('the items of one change count in the position only once all are delivered', async () => {
    const fake = await fakeServer((request, socket) => {
      if (request.afterSeq === 0) answer(socket, { ok: true, id: request.id, changes: [item(4), item(4), item(6)], next: 7, newest: 9, oldestAfterSeq: 0 });
    });
    const client = createClient({ nodes: [fake.address] });
    const follower = client.follow();
    try {
      const positions = [];
      for (let i = 0; i < 3; i++) {
        await follower.next();
        positions.push(follower.position);
      }
      assert.deepEqual(positions, [3, 4, 7]); // page.next (7) once the last item is handed over
      assert.equal(follower.newest, 9);
    } finally {
      await follower.close();
      await client.close();
      await fake.close();
    }
  });

  test('an AbortSignal stops a waiting follower with AbortError, once; then it is done', async () => {
    const fake = await fakeServer(() => undefined); // every read waits
    const client = createClient({ nodes: [fake.address] });
    const controller = new AbortController();
    const follower = client.follow({ afterSeq: 5 }, { signal: controller.signal });
    const pending = follower.next();
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    await assert.rejects(pending, (error) => error instanceof AbortError && error.cause.message === 'shutting down');
    assert.deepEqual(await follower.next(), { value: undefined, done: true });
    assert.equal(follower.position, 5);
    await client.close();
    await fake.close();
  });
});
