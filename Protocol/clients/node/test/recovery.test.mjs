// A real server stopped and started again on the same port: the pool reconnects by itself, and a watch
// stream watches again and says that it may have missed changes (a gap event) before the next push.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NoNodeAvailableError, createClient } from '../dist/index.js';
import { freePort, startServer, stopServer, tempDir } from './helpers/server.mjs';

/** The next event of a watch stream, or a failure after `ms`. */
async function nextEvent(stream, ms) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no watch event within ${ms} ms`)), ms)));
  try {
    return (await Promise.race([stream.next(), timeout])).value;
  } finally {
    clearTimeout(timer);
  }
}

test('the pool reconnects after a restart; a watch re-watches and reports the gap', async () => {
  const port = await freePort();
  const dir = tempDir();
  let server = await startServer({ port, dir });
  const client = createClient({ nodes: [server.address] });
  const watcher = createClient({ nodes: [server.address] });
  try {
    const user = `restart-${process.pid}`;
    const stream = await watcher.watch({ user });
    const first = await client.grant({ user, product: 'p', idempotencyKey: `${user}-1` });
    assert.equal((await nextEvent(stream, 5000)).membership.id, first.membership.id);

    assert.equal(await server.stop(), 0);
    // While the server is down nothing can be sent: certainly not applied.
    await assert.rejects(client.grant({ user, product: 'p' }), (error) => error instanceof NoNodeAvailableError && !error.mayHaveBeenApplied);

    server = await startServer({ port, dir });
    assert.equal((await client.check({ user })).active, true); // the data survived, the pool reconnected
    const gap = await nextEvent(stream, 10_000);
    assert.equal(gap.kind, 'gap');
    assert.ok(gap.from <= gap.to);
    assert.ok(gap.error instanceof Error);

    const second = await client.grant({ user, product: 'q' });
    const pushed = await nextEvent(stream, 5000);
    assert.equal(pushed.kind, 'access');
    assert.equal(pushed.membership.id, second.membership.id);
    await stream.close();
  } finally {
    await watcher.close();
    await client.close();
    await stopServer(server);
  }
});
