// The README's code blocks, run as written against a real server: the package imports itself by its name
// (`entitled-client`), which Node resolves through package.json `exports` for a file inside the package.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { CLIENT_DIR, startServer, stopServer } from './helpers/server.mjs';

const readme = readFileSync(join(CLIENT_DIR, 'README.md'), 'utf8');

/** Runs the first ```js block after `heading` against a fresh server; resolves with its output lines. */
async function runBlock(heading, name) {
  const start = readme.indexOf(heading);
  assert.ok(start >= 0, `the README has a section ${heading}`);
  const block = /```js\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(block, `the README has a \`\`\`js block after ${heading}`);
  const script = join(CLIENT_DIR, 'dist', `readme-${name}.mjs`);
  writeFileSync(script, block[1]);
  const server = await startServer();
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { ...process.env, ENTITLED_ADDRESS: server.address },
      timeout: 20_000,
    });
    return stdout.trim().split('\n');
  } finally {
    rmSync(script, { force: true });
    await stopServer(server);
  }
}

test("the README's first session runs", async () => {
  const lines = await runBlock('## First session', 'first-session');
  assert.match(lines[0], /^true until \d{4}-\d\d-\d\dT/);
  assert.equal(lines[1], 'not_found');
  assert.equal(lines[2], 'prod_pro_monthly active');
});

test("the README's change feed example copies with an export, then follows the feed", async () => {
  const lines = await runBlock('### The change feed and exports', 'change-feed');
  assert.deepEqual(lines, ['copied 1 as of change 1', '2 revoke revoked']);
});
