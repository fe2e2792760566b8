// The client against fake line servers, for what a real server does not do on demand: never answering,
// answering late, answering `loading`, closing after reading a line, answering every error code.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import * as entitled from '../dist/index.js';
import { answer, fakeServer } from './helpers/server.mjs';

const {
  AbortError, ConnectionClosedError, LoadingError, NoNodeAvailableError, OutcomeUnknownError, ProtocolError, StaleError,
  TimeoutError, UnknownCodeError, createClient,
} = entitled;

const MEMBERSHIP = {
  id: 'mem_0000000000000', productId: 'p', user: 'u', status: 'active', isActive: true, createdAt: '2026-01-01T00:00:00Z',
  expiresAt: null, source: 'manual', willRenew: false, periodType: 'normal', renewState: 'non_renewable', renewsCount: 0,
  environment: 'production', ownership: 'purchased', grantType: 'purchase',
};

/** A server answering each op the usual way: ping, check (inactive), grant (seq 42). */
function ordinary(request, socket) {
  if (request.op === 'grant') answer(socket, { ok: true, id: request.id, seq: 42, membership: MEMBERSHIP });
  else if (request.op === 'check') answer(socket, { ok: true, id: request.id, active: false });
  else answer(socket, { ok: true, id: request.id });
}

describe('timeouts and cancellation', () => {
  test('a request times out, keeps its place, and the connection stays usable after its late answer', async () => {
    const held = [];
    let checks = 0;
    const fake = await fakeServer((request, socket) => {
      if (request.op === 'check' && ++checks <= 2) held.push(() => ordinary(request, socket));
      else {
        for (const release of held.splice(0)) release();
        ordinary(request, socket);
      }
    });
    const client = createClient({ nodes: [fake.address] });
    await assert.rejects(client.check({ user: 'u' }, { timeoutMs: 100 }), (error) => {
      assert.ok(error instanceof TimeoutError);
      assert.equal(error.mayHaveBeenApplied, false); // a read applies nothing
      return true;
    });
    await assert.rejects(client.check({ user: 'u' }, { timeoutMs: 100 }), TimeoutError);
    // The ping releases the held answers first: they are dropped, and the ping gets its own answer.
    await client.ping();
    assert.deepEqual(await client.check({ user: 'u' }), { active: false });
    assert.equal(fake.connections, 1);
    await client.close();
    await fake.close();
  });

  test('a write that times out after it was sent may have been applied', async () => {
    const fake = await fakeServer(() => undefined);
    const client = createClient({ nodes: [fake.address], timeoutMs: 100 });
    await assert.rejects(client.grant({ user: 'u', product: 'p', idempotencyKey: 'k' }), (error) => {
      assert.ok(error instanceof TimeoutError);
      assert.equal(error.mayHaveBeenApplied, true);
      assert.equal(error.op, 'grant');
      return true;
    });
    await client.close();
    await fake.close();
  });

  test('an AbortSignal cancels a call in flight; an aborted signal sends nothing', async () => {
    const lines = [];
    const fake = await fakeServer((request) => lines.push(request.op));
    const client = createClient({ nodes: [fake.address] });
    await client.connect();
    const controller = new AbortController();
    const pending = client.grant({ user: 'u', product: 'p' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left')), 50);
    await assert.rejects(pending, (error) => {
      assert.ok(error instanceof AbortError);
      assert.equal(error.mayHaveBeenApplied, true);
      assert.equal(error.cause.message, 'user left');
      return true;
    });
    await assert.rejects(client.check({ user: 'u' }, { signal: AbortSignal.abort() }), (error) => error instanceof AbortError && !error.mayHaveBeenApplied);
    // A call cancelled in the same turn it was made is never written.
    const late = new AbortController();
    const never = client.grant({ user: 'u', product: 'q' }, { signal: late.signal });
    late.abort();
    await assert.rejects(never, (error) => error instanceof AbortError && !error.mayHaveBeenApplied);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(lines, ['grant']);
    await client.close();
    await fake.close();
  });
});

describe('loading', () => {
  /** Answers `loading` on the first `loadingConnections` connections, closing each after 100 ms. */
  function starting(loadingConnections) {
    return fakeServer((request, socket, state) => {
      if (state.connection <= loadingConnections) {
        answer(socket, { ok: false, id: request.id, error: { code: 'loading', message: 'loading', loaded: 5, total: 10 } });
        setTimeout(() => socket.end(), 100);
      } else ordinary(request, socket);
    });
  }

  test('a starting server is waited out, reads and writes alike', async () => {
    const fake = await starting(2);
    const client = createClient({ nodes: [fake.address] });
    assert.deepEqual(await client.check({ user: 'u' }), { active: false });
    assert.equal((await client.grant({ user: 'u', product: 'p' })).seq, 42);
    assert.ok(fake.connections >= 3);
    await client.close();
    await fake.close();
  });

  test('loadingWaitMs 0 throws the loading error at once, with its progress', async () => {
    const fake = await starting(1);
    const client = createClient({ nodes: [fake.address], loadingWaitMs: 0 });
    await assert.rejects(client.grant({ user: 'u', product: 'p' }), (error) => {
      assert.ok(error instanceof LoadingError);
      assert.deepEqual(error.progress, { loaded: 5, total: 10 });
      assert.equal(error.mayHaveBeenApplied, false);
      return true;
    });
    await client.close();
    await fake.close();
  });

  test('the token is sent first on every connection, the loading ones included', async () => {
    const auths = [];
    const fake = await fakeServer((request, socket, state) => {
      if (request.op === 'auth') auths.push(state.connection);
      if (state.connection === 1) {
        answer(socket, { ok: false, id: request.id, error: { code: 'loading', message: 'loading', loaded: 0, total: 0 } });
        setTimeout(() => socket.end(), 20);
      } else if (request.op === 'auth') answer(socket, { ok: true, id: request.id, name: 'n', role: 'admin', authRequired: true });
      else ordinary(request, socket);
    });
    const client = createClient({ nodes: [fake.address], token: 'secret-token-0123456789' });
    await client.ping();
    assert.deepEqual(auths, [1, 2]);
    await client.close();
    await fake.close();
  });
});

describe('several nodes', () => {
  /** A node that reads one line of each connection and closes it without answering. */
  const dropping = (lines) => fakeServer((request, socket) => {
    lines.push(request.op);
    socket.destroy();
  });

  test('a read whose connection drops is sent again to another node; a write is not', async () => {
    const droppedLines = [];
    const answeredLines = [];
    const bad = await dropping(droppedLines);
    const good = await fakeServer((request, socket) => {
      answeredLines.push(request.op);
      ordinary(request, socket);
    });
    for (let round = 0; round < 4; round++) {
      // The pool starts at a random node: over a few rounds both orders happen.
      const client = createClient({ nodes: [bad.address, good.address] });
      assert.deepEqual(await client.check({ user: 'u' }), { active: false });
      await client.close();
    }
    assert.equal(answeredLines.filter((op) => op === 'check').length, 4);
    assert.ok(droppedLines.every((op) => op === 'check'));

    const both = [];
    const first = await dropping(both);
    const second = await dropping(both);
    const client = createClient({ nodes: [first.address, second.address] });
    await assert.rejects(client.grant({ user: 'u', product: 'p', idempotencyKey: 'k1' }), (error) => {
      assert.ok(error instanceof ConnectionClosedError);
      assert.equal(error.mayHaveBeenApplied, true);
      assert.match(error.message, /may have been applied/);
      return true;
    });
    assert.deepEqual(both, ['grant']);
    await assert.rejects(client.check({ user: 'u' }), ConnectionClosedError);
    assert.deepEqual(both, ['grant', 'check', 'check']); // once per node
    await client.close();
    for (const fake of [bad, good, first, second]) await fake.close();
  });

  test('no node accepting a connection names each node', async () => {
    const fake = await fakeServer(() => undefined);
    const address = fake.address;
    await fake.close();
    const client = createClient({ nodes: [address, '127.0.0.1:1'] });
    await assert.rejects(client.ping(), (error) => {
      assert.ok(error instanceof NoNodeAvailableError);
      assert.equal(error.failures.length, 2);
      assert.match(error.message, new RegExp(`${address}: connection refused`));
      assert.equal(error.mayHaveBeenApplied, false);
      return true;
    });
    await client.close();
  });

  test('stale is asked again once on another node', async () => {
    const staleNode = await fakeServer((request, socket) => answer(socket, { ok: false, id: request.id, error: { code: 'stale', message: 'behind' } }));
    const freshNode = await fakeServer(ordinary);
    const client = createClient({ nodes: [staleNode.address, freshNode.address] });
    for (let round = 0; round < 3; round++) assert.deepEqual(await client.check({ user: 'u', minSeq: 7 }), { active: false });
    await client.close();
    const single = createClient({ nodes: [staleNode.address] });
    await assert.rejects(single.check({ user: 'u', minSeq: 7 }), StaleError);
    await single.close();
    await staleNode.close();
    await freshNode.close();
  });
});

describe('answers', () => {
  test('readYourWrites carries the last seq as minSeq on reads', async () => {
    const seen = [];
    const fake = await fakeServer((request, socket) => {
      seen.push(request);
      ordinary(request, socket);
    });
    const client = createClient({ nodes: [fake.address], readYourWrites: true });
    await client.check({ user: 'u' });
    await client.grant({ user: 'u', product: 'p' });
    await client.check({ user: 'u' });
    await client.check({ user: 'u', minSeq: 3 });
    assert.deepEqual(seen.filter((r) => r.op === 'check').map((r) => r.minSeq), [undefined, 42, 3]);
    await client.close();
    await fake.close();
  });

  test('every error code is thrown as its class; an unknown code as UnknownCodeError', async () => {
    let code;
    const fake = await fakeServer((request, socket) => answer(socket, { ok: false, id: request.id, error: { code, message: `a ${code}` } }));
    const client = createClient({ nodes: [fake.address], loadingWaitMs: 0 });
    for (const [name, Class] of Object.entries(entitled.ERROR_CLASSES)) {
      if (name === 'busy' || name === 'tls_required' || name === 'too_large') continue; // these close the connection; below
      code = name;
      await assert.rejects(client.grant({ user: 'u', product: 'p' }), (error) => {
        assert.ok(error instanceof Class, name);
        assert.equal(error.code, name);
        assert.equal(error.serverMessage, `a ${name}`);
        assert.equal(error.mayHaveBeenApplied, name === 'outcome_unknown' || name === 'internal', name);
        return true;
      });
    }
    code = 'brand_new';
    await assert.rejects(client.grant({ user: 'u', product: 'p' }), (error) => error instanceof UnknownCodeError && error.code === 'brand_new' && error.mayHaveBeenApplied);
    await assert.rejects(client.check({ user: 'u' }), (error) => error instanceof UnknownCodeError && !error.mayHaveBeenApplied);
    code = 'outcome_unknown';
    await assert.rejects(client.check({ user: 'u' }), (error) => error instanceof OutcomeUnknownError && !error.mayHaveBeenApplied);
    await client.close();
    await fake.close();
  });

  test('a line refusing the connection (busy, tls_required) without id fails the request and the connection', async () => {
    for (const [code, Class] of [['busy', entitled.BusyError], ['tls_required', entitled.TlsRequiredError], ['too_large', entitled.TooLargeError]]) {
      const fake = await fakeServer((request, socket) => {
        answer(socket, { ok: false, error: { code, message: code } });
        socket.end();
      });
      const client = createClient({ nodes: [fake.address] });
      await assert.rejects(client.grant({ user: 'u', product: 'p' }), (error) => error instanceof Class && !error.mayHaveBeenApplied);
      await client.close();
      await fake.close();
    }
  });

  test('an answer with another id is a protocol error that fails every request in flight', async () => {
    const fake = await fakeServer((request, socket) => answer(socket, { ok: true, id: 999 }));
    const client = createClient({ nodes: [fake.address] });
    const results = await Promise.allSettled([client.grant({ user: 'u', product: 'p' }), client.grant({ user: 'u', product: 'q' })]);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.ok(result.reason instanceof ProtocolError || result.reason instanceof ConnectionClosedError, String(result.reason));
      assert.equal(result.reason.mayHaveBeenApplied, true);
    }
    await client.close();
    await fake.close();
  });
});
