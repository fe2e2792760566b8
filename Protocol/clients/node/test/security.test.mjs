// TLS (a self-signed certificate made with openssl, trusted and untrusted, TLS and plain ports mixed up)
// and authentication with a token file (roles, a refused token), against real servers.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ConnectError, ForbiddenError, TlsRequiredError, UnauthorizedError, createClient,
} from '../dist/index.js';
import { selfSignedCertificate, startServer, stopServer, tempDir, writeAuthFile } from './helpers/server.mjs';

const ADMIN = 'node-admin-token-0001';
const CHECKER = 'node-check-token-0001';

describe('TLS', () => {
  test('trusted, untrusted, and the wrong kind of port', async () => {
    const dir = tempDir();
    const { cert, key } = selfSignedCertificate(dir);
    const server = await startServer({ dir, args: ['--tls-cert', cert, '--tls-key', key] });
    const plain = await startServer();
    try {
      const trusted = createClient({ nodes: [server.address], tls: { caFile: cert } });
      assert.equal((await trusted.hello()).protocol, 5);
      await trusted.close();

      const byName = createClient({ nodes: [`localhost:${server.port}`], tls: { caFile: cert } });
      await byName.ping();
      await byName.close();

      const untrusted = createClient({ nodes: [server.address], tls: true });
      await assert.rejects(untrusted.ping(), (error) => {
        assert.ok(error instanceof ConnectError, String(error));
        assert.ok(error.fatal);
        assert.match(error.message, /not trusted: it is self-signed.*caFile/);
        return true;
      });
      await untrusted.close();

      const noTls = createClient({ nodes: [server.address] });
      await assert.rejects(noTls.ping(), (error) => {
        assert.ok(error instanceof TlsRequiredError, String(error));
        assert.match(error.message, /create the client with the tls option/);
        return true;
      });
      await noTls.close();

      const tlsToPlain = createClient({ nodes: [plain.address], tls: { caFile: cert } });
      await assert.rejects(tlsToPlain.ping(), /does not speak TLS on this port/);
      await tlsToPlain.close();
    } finally {
      await stopServer(server);
      await stopServer(plain);
    }
  });
});

describe('authentication', () => {
  test('the token authenticates every connection; roles and refusals', async () => {
    const dir = tempDir();
    const auth = writeAuthFile(dir, [
      { name: 'node-admin', token: ADMIN, role: 'admin' },
      { name: 'node-check', token: CHECKER, role: 'check' },
    ]);
    const server = await startServer({ dir, args: ['--auth', auth] });
    try {
      const admin = createClient({ nodes: [server.address], token: ADMIN, connectionsPerNode: 2 });
      const granted = await Promise.all([1, 2, 3, 4].map((n) => admin.grant({ user: `auth-${n}`, product: 'p' })));
      const entries = (await admin.history({ user: 'auth-1' })).items;
      assert.equal(entries[0].actor, 'node-admin');
      assert.equal(granted.length, 4);
      assert.equal((await admin.reload()).tokens, 2);

      const checker = createClient({ nodes: [server.address], token: CHECKER });
      assert.equal((await checker.check({ user: 'auth-1' })).active, true);
      await assert.rejects(checker.grant({ user: 'auth-1', product: 'p' }), (error) => error instanceof ForbiddenError && !error.mayHaveBeenApplied);

      const anonymous = createClient({ nodes: [server.address] });
      await anonymous.ping(); // ping needs no token
      await assert.rejects(anonymous.check({ user: 'auth-1' }), UnauthorizedError);

      const wrong = createClient({ nodes: [server.address], token: 'not-a-token-of-the-file' });
      await assert.rejects(wrong.ping(), (error) => {
        assert.ok(error instanceof UnauthorizedError);
        assert.ok(!error.message.includes('not-a-token-of-the-file'), 'the token is never shown');
        return true;
      });
      for (const client of [admin, checker, anonymous, wrong]) await client.close();
    } finally {
      await stopServer(server);
    }
  });
});
