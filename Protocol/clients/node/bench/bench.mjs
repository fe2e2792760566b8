#!/usr/bin/env node
// Checks through the client at a fixed concurrency, for comparison with entitled-loadgen.
//
//   node bench/bench.mjs --host 127.0.0.1 --port P [--in-flight 50] [--duration 10] [--warmup 2] [--users 1000]
//                        [--token-file F] [--connections-per-node 1]
//
// Grants --users users (one membership each), then keeps exactly --in-flight checks of those users in flight
// through one client (by default one pooled connection, pipelined: each answer sends the next check, where
// entitled-loadgen --pipeline sends a batch once the previous one is all answered), and prints one JSON line:
// checks, seconds, checksPerSecond, and this process's own CPU time (getrusage, through process.cpuUsage)
// in the measured window, per check. Build the client first (tsc -p .).

import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '7117' },
    'in-flight': { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    users: { type: 'string', default: '1000' },
    'token-file': { type: 'string' },
    'connections-per-node': { type: 'string', default: '1' },
  },
});
const inFlight = Number(values['in-flight']);
const users = Number(values.users);
const token = values['token-file'] ? readFileSync(values['token-file'], 'utf8').split('\n')[0].trim() : undefined;

const client = createClient({
  nodes: [`${values.host}:${values.port}`],
  token,
  connectionsPerNode: Number(values['connections-per-node']),
});

const run = Math.random().toString(16).slice(2, 8);
const names = Array.from({ length: users }, (_, i) => `bench-${run}-${i}`);
for (let i = 0; i < users; i += 500) {
  await Promise.all(names.slice(i, i + 500).map((user) => client.grant({ user, product: 'bench_pro' })));
}

// Each worker is one check in flight, made as an application makes it: through client.check, awaiting its
// answer before the next. A failed check stops the run (a worker that died would leave fewer in flight
// than --in-flight and the figure would not be what it says).
let counting = false;
let checks = 0;
let running = true;
let next = 0;
let failure;
async function worker() {
  while (running) {
    const result = await client.check({ user: names[next++ % users] });
    if (!result.active) throw new Error('a granted user is not active');
    if (counting) checks++;
  }
}
const stopOnFailure = (error) => {
  failure ??= error;
  running = false;
};
const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

const workers = Array.from({ length: inFlight }, () => worker().catch(stopOnFailure));
await sleep(Number(values.warmup));
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
counting = true;
await sleep(Number(values.duration));
counting = false;
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
running = false;
await Promise.all(workers);
await client.close();
if (failure !== undefined) {
  console.error('bench: a check failed:', failure);
  process.exit(1);
}

const user = cpu.user / 1e6;
const system = cpu.system / 1e6;
console.log(JSON.stringify({
  client: 'node',
  inFlight,
  checks,
  seconds: Number(seconds.toFixed(3)),
  checksPerSecond: Math.round(checks / seconds),
  cpuUserSeconds: Number(user.toFixed(3)),
  cpuSystemSeconds: Number(system.toFixed(3)),
  cpuMicrosecondsPerCheck: Number((((user + system) * 1e6) / checks).toFixed(2)),
}));
