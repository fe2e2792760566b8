// Every conformance scenario of Protocol/conformance/ run through the client's Connection against a real
// server: the main ones against a fresh server, the restricted/ ones against a server started with that
// folder's auth file and --max-connections 4 (Protocol/conformance/restricted/README.md).

import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runScenario } from './helpers/conformance.mjs';
import { PROTOCOL_DIR, startServer, stopServer } from './helpers/server.mjs';

const SCENARIOS = join(PROTOCOL_DIR, 'conformance');
const RESTRICTED = join(SCENARIOS, 'restricted');
const scenarios = (dir) => readdirSync(dir).filter((name) => name.endsWith('.ndjson')).sort();

function suite(title, dir, args) {
  describe(title, () => {
    let server;
    before(async () => {
      server = await startServer({ args });
    });
    after(async () => {
      await stopServer(server);
    });
    const files = scenarios(dir);
    test('finds the scenarios', () => {
      assert.ok(files.length > 0, `no scenarios in ${dir}`);
    });
    for (const file of files) {
      test(file, async () => {
        const failure = await runScenario(join(dir, file), server.address);
        assert.equal(failure, undefined, `${file}: ${failure}`);
      });
    }
  });
}

suite('conformance', SCENARIOS, []);
suite('conformance/restricted', RESTRICTED, ['--auth', join(RESTRICTED, 'auth.json'), '--max-connections', '4']);
