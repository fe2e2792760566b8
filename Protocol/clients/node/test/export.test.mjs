// Exports against a real server: a copy read in pages on one connection equals what the server lists, the
// feed followed after its `seq` holds exactly what was written meanwhile, the audit trail, and the limits.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { OverLimitError, createClient } from '../dist/index.js';
import { startServer, stopServer } from './helpers/server.mjs';

let server;
let client;
before(async () => {
  server = await startServer(); // a server of its own: an export copies everything
  client = createClient({ nodes: [server.address] });
});
after(async () => {
  await client.close();
  await stopServer(server);
});

/** Every membership the server lists for a source, in creation order. */
async function listed(source) {
  const all = [];
  for await (const membership of client.membershipsIterator({ source }, { pageSize: 1000 })) all.push(membership);
  return all;
}

test('an export in pages of 50 equals the listed memberships; following after its seq misses nothing written meanwhile', async () => {
  await client.define({ entitlement: 'pro', products: ['prod_pro'] });
  await Promise.all(Array.from({ length: 300 }, (_, i) => client.grant({ user: `u${i % 40}`, product: 'prod_pro' })));
  const asOf = client.lastSeq;

  const reader = await client.openExport({}, { pageSize: 50 });
  assert.equal(reader.seq, asOf);
  assert.match(reader.time, /^\d{4}-\d\d-\d\dT/);
  assert.deepEqual(reader.catalog, await client.catalog());
  const exported = [];
  const meanwhile = [];
  let pages = 0;
  for await (const page of reader) {
    pages++;
    assert.ok(page.memberships.length <= 50);
    assert.equal(page.export.seq, asOf);
    exported.push(...page.memberships);
    // Written while the export is read: not in the copy, but in the feed after its seq.
    for (let i = 0; i < 3; i++) meanwhile.push(await client.grant({ user: `late${pages}-${i}`, product: 'prod_pro' }));
  }
  meanwhile.push(await client.revoke({ membership: exported[0].id, reason: 'refund' }));
  assert.equal(pages, 6);

  const now = await listed('manual');
  assert.deepEqual(exported, now.slice(0, 300).map((m) => (m.id === exported[0].id ? exported[0] : m)));
  assert.deepEqual(now.slice(300).map((m) => m.id), meanwhile.slice(0, -1).map((w) => w.membership.id));

  const follower = client.follow({ afterSeq: reader.seq }, { pageSize: 7 });
  try {
    const items = [];
    for await (const item of follower) {
      items.push(item);
      if (item.sequence === client.lastSeq) break;
    }
    assert.deepEqual(items.map((item) => [item.sequence, item.membership.id]), meanwhile.map((w) => [w.seq, w.membership.id]));
    assert.equal(items.at(-1).membership.status, 'revoked');
  } finally {
    await follower.close();
  }
});

test('an export with history gives its memberships\' audit trail; a reader is read once', async () => {
  const reader = await client.openExport({ history: true }, { pageSize: 100 });
  const ids = new Set();
  const granted = new Set();
  for await (const page of reader) {
    for (const membership of page.memberships) ids.add(membership.id);
    for (const entry of page.history) if (entry.action === 'grant') granted.add(entry.membership.id);
  }
  assert.ok(ids.size > 300);
  assert.deepEqual([...granted].sort(), [...ids].sort());
  await assert.rejects(reader.pages().next(), TypeError);
  await assert.rejects(reader.memberships().next(), TypeError);
});

test('one page at a time with export, and at most 4 exports open at once', async () => {
  const first = await client.export({ limit: 2 });
  assert.equal(first.memberships.length, 2);
  assert.equal(typeof first.next, 'string');
  const second = await client.export({ after: first.next, limit: 2 });
  assert.equal(second.export.seq, first.export.seq);
  assert.equal(second.entitlements, undefined);
  assert.notEqual(second.memberships[0].id, first.memberships[0].id);

  const open = [];
  try {
    // The one of `first` is still held: three more fill the server's four.
    for (let i = 0; i < 3; i++) open.push(await client.openExport({}, { pageSize: 1 }));
    await assert.rejects(client.openExport(), (error) => error instanceof OverLimitError && !error.mayHaveBeenApplied);
  } finally {
    await Promise.all(open.map((reader) => reader.close()));
  }
});
