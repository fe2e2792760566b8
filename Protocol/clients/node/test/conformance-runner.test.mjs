// The conformance runner must fail what does not match, or its passes would prove nothing: the matcher's
// rules, and scenarios with a wrong expectation run against a real server.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Mismatch, match, runScenario } from './helpers/conformance.mjs';
import { startServer, stopServer, tempDir } from './helpers/server.mjs';

test('the matcher: placeholders, captures, $exact, $anyOf, $absent, types', () => {
  const fails = (expected, actual, captures = {}) => assert.throws(() => match(expected, actual, captures), Mismatch);
  assert.deepEqual(match({ a: '$id:m' }, { a: 'mem_0123456789abc', b: 1 }, {}), { 'id:m': 'mem_0123456789abc' });
  fails({ a: '$id:m' }, { a: 'mem_0123456789abd' }, { 'id:m': 'mem_0123456789abc' });
  fails({ a: '$id:n' }, { a: 'mem_0123456789abc' }, { 'id:m': 'mem_0123456789abc' }); // two names, one id
  fails({ $exact: true, a: 1 }, { a: 1, b: 2 });
  match({ $exact: true, a: 1, $anyOf: [{ b: 2 }, { c: 3 }] }, { a: 1, b: 2 }, {});
  fails({ $anyOf: [{ b: 2 }, { c: 3 }] }, { b: 3 });
  fails({ a: '$absent' }, { a: null });
  fails({ a: 1 }, { a: true });
  fails({ a: '1' }, { a: 1 });
  match({ a: 1 }, { a: 1.0 }, {});
  fails(['$any'], []);
  fails('$time', '2026-01-01T00:00:00.000Z');
  match('$time', '2026-01-01T00:00:00.120Z', {});
  match('$$text', '$text', {});
  fails('$integer', 1.5);
});

let server;
let dir;
before(async () => {
  server = await startServer();
  dir = tempDir();
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopServer(server);
});

async function run(lines) {
  const path = join(dir, `s${Math.random().toString(16).slice(2)}.ndjson`);
  writeFileSync(path, lines.map((line) => JSON.stringify(line)).join('\n'));
  return runScenario(path, server.address, { timeoutSeconds: 0.5 });
}

test('a scenario with a wrong expectation fails, naming the line', async () => {
  assert.equal(await run([{ send: { op: 'ping', id: 1 } }, { expect: { ok: true, id: 1 } }]), undefined);
  assert.match(await run([{ send: { op: 'ping', id: 1 } }, { expect: { ok: true, id: 2 } }]), /^line 2 \(expect\): \$\.id: expected 2, got 1/);
  assert.match(await run([{ send: { op: 'ping', id: 1 } }]), /a response the scenario did not expect/);
  assert.match(await run([{ expect: { ok: true } }]), /expected a response, got none/);
  assert.match(await run([{ expectPush: { push: 'access' } }]), /expected a pushed line/);
  assert.match(await run([{ send: { op: 'ping' } }, { expectClosed: true }]), /line 2 \(expectClosed\)/);
  assert.match(await run([{ sendRaw: '{"op":"ping"}', newline: false }, { expect: { ok: true } }]), /expected a response/);
});
