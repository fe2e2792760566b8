// The README's first code block, run as written against a real server: the package imports itself by its
// name (`entitled-client`), which Node resolves through package.json `exports` for a file inside the package.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { CLIENT_DIR, startServer, stopServer } from './helpers/server.mjs';

test("the README's first session runs", async () => {
  const readme = readFileSync(join(CLIENT_DIR, 'README.md'), 'utf8');
  const block = /```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(block, 'the README has a ```js block');
  const script = join(CLIENT_DIR, 'dist', 'readme-first-session.mjs');
  writeFileSync(script, block[1]);
  const server = await startServer();
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { ...process.env, ENTITLED_ADDRESS: server.address },
      timeout: 20_000,
    });
    const lines = stdout.trim().split('\n');
    assert.match(lines[0], /^true until \d{4}-\d\d-\d\dT/);
    assert.equal(lines[1], 'not_found');
    assert.equal(lines[2], 'prod_pro_monthly active');
  } finally {
    rmSync(script, { force: true });
    await stopServer(server);
  }
});
