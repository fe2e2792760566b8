// Starts and stops real `entitled` servers for the tests, and fake line servers for the failure cases.
//
// The binary is $ENTITLED_BINARY (an absolute path; a relative one is taken from the repository root),
// by default <repo>/.build/debug/entitled. A server is started with `--port 0` (or a given port), a fresh
// data directory and `--snapshot-interval 0`; its port is read from the ready line on standard output.

import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLIENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const REPO_ROOT = resolve(CLIENT_DIR, '../../..');
export const PROTOCOL_DIR = join(REPO_ROOT, 'Protocol');

export function serverBinary() {
  const path = process.env.ENTITLED_BINARY || '.build/debug/entitled';
  return isAbsolute(path) ? path : join(REPO_ROOT, path);
}

export function tempDir(prefix = 'entitled-node-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * Starts a server. Options: `args` (more flags), `port` (default 0), `socket` (also listen on a Unix
 * socket), `dir` (reuse a data directory, for restarts). Resolves with { port, socketPath, dir, stop, kill }.
 */
export async function startServer({ args = [], port = 0, socket = false, dir = tempDir() } = {}) {
  const socketPath = socket ? join(dir, 'e.sock') : undefined;
  const argv = ['--port', String(port), '--data-dir', join(dir, 'data'), '--snapshot-interval', '0', ...args];
  if (socketPath) argv.push('--socket', socketPath);
  const child = spawn(serverBinary(), argv, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolveExit) => child.once('exit', (code, signal) => resolveExit(code ?? signal)));
  const listening = await new Promise((resolveReady, rejectReady) => {
    const timer = setTimeout(() => rejectReady(new Error(`entitled did not start within 30 s; stderr:\n${stderr}`)), 30_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on .*?tcp 127\.0\.0\.1:(\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolveReady(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rejectReady(new Error(`entitled exited (${code}) before it was ready; stderr:\n${stderr}`));
    });
  });
  return {
    port: listening,
    address: `127.0.0.1:${listening}`,
    socketPath,
    dir,
    /** SIGTERM, then the exit status (killed after 15 s). */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
    /** SIGKILL: a crash. */
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
    stderr: () => stderr,
  };
}

/** Stops the server with SIGTERM, removes its directory, and fails unless it exited with status 0. */
export async function stopServer(server) {
  const status = await server.stop();
  rmSync(server.dir, { recursive: true, force: true });
  assert.equal(status, 0, `entitled's exit status after SIGTERM; stderr:\n${server.stderr().slice(-2000)}`);
}

/** A free TCP port (bound and released), for tests that restart a server on the same port. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address();
  await new Promise((resolveClose) => server.close(resolveClose));
  return port;
}

/** Writes an auth file with the given tokens ({name, token, role}) into `dir`; returns its path. */
export function writeAuthFile(dir, tokens) {
  const path = join(dir, 'auth.json');
  writeFileSync(path, JSON.stringify(tokens), { mode: 0o600 });
  return path;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with the openssl command line. */
export function selfSignedCertificate(dir, name = 'server') {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key };
}

/**
 * A fake line server: `onLine(line, socket, state)` is called for each request line of each connection
 * (`state` is per connection: { connection: n, lines: [...] }). Resolves with { port, address, close, connections }.
 */
export async function fakeServer(onLine, port = 0) {
  const sockets = new Set();
  let count = 0;
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setEncoding('utf8');
    const state = { connection: ++count, lines: [] };
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk;
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        state.lines.push(line);
        onLine(JSON.parse(line), socket, state);
      }
    });
  });
  await new Promise((resolveListen) => server.listen(port, '127.0.0.1', resolveListen));
  const actual = server.address().port;
  return {
    port: actual,
    address: `127.0.0.1:${actual}`,
    get connections() {
      return count;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolveClose) => server.close(resolveClose));
    },
  };
}

/** Writes one answer line. */
export function answer(socket, object) {
  socket.write(JSON.stringify(object) + '\n');
}
