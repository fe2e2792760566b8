// Runs the protocol conformance scenarios (Protocol/conformance/*.ndjson) through this client's public API:
// one `Connection` per scenario connection, its raw `request` and `writeRaw` (which pipeline: a send does
// not wait), its `onPush` stream, its `onUnsolicited` lines and its `closed` signal. The matcher follows
// Protocol/conformance/README.md (placeholders, captures, $anyOf, $exact, ${S} tags, timeouts), as
// Tools/conformance/run.py implements it.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Connection } from '../../dist/index.js';

const RESPONSE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.(?!000)\d{3})?Z$/;
const MEMBERSHIP_ID = /^mem_[0-9abcdefghjkmnpqrstvwxyz]{13}$/;
const CAPTURE = /^\$(id|time|value):([A-Za-z0-9_.-]+)$/;
const DIRECTIVES = new Set(['send', 'sendRaw', 'expect', 'expectPush', 'expectNoPush', 'expectClosed', 'comment', 'sleep']);
const STEP_KEYS = new Set([...DIRECTIVES, 'connection', 'invalid', 'repeat', 'newline', 'timeout']);

/** The first difference between what a scenario expects and what the server did. */
export class Mismatch extends Error {}

function describe(value) {
  const text = JSON.stringify(value);
  return text !== undefined && text.length > 400 ? `${text.slice(0, 400)}…` : text;
}

function jsonType(value) {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (Array.isArray(value)) return 'array';
  return 'object';
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Returns the captures extended by this match, or throws Mismatch; `captures` itself is left untouched. */
export function match(expected, actual, captures, path = '$') {
  if (typeof expected === 'string' && expected.startsWith('$')) {
    if (expected.startsWith('$$')) expected = expected.slice(1); // "$$x" is the literal string "$x"
    else return matchPlaceholder(expected, actual, captures, path);
  }
  if (isObject(expected)) {
    if (!isObject(actual)) throw new Mismatch(`${path}: expected an object, got ${describe(actual)}`);
    let result = captures;
    for (const [key, value] of Object.entries(expected)) {
      if (key === '$exact' || key === '$anyOf') continue;
      if (value === '$absent') {
        if (key in actual) throw new Mismatch(`${path}.${key}: expected no such key, got ${describe(actual[key])}`);
        continue;
      }
      if (!(key in actual)) throw new Mismatch(`${path}.${key}: missing (object was ${describe(actual)})`);
      result = match(value, actual[key], result, `${path}.${key}`);
    }
    const alternatives = expected.$anyOf;
    if (alternatives !== undefined) {
      const problems = [];
      let matched = false;
      for (const alternative of alternatives) {
        try {
          result = match(alternative, actual, result, path);
          matched = true;
          break;
        } catch (problem) {
          if (!(problem instanceof Mismatch)) throw problem;
          problems.push(problem.message);
        }
      }
      if (!matched) throw new Mismatch(`${path}: matches none of the $anyOf patterns: ${problems.join(' | ')}`);
    }
    if (expected.$exact === true) {
      const named = new Set(Object.entries(expected).filter(([k, v]) => k !== '$exact' && k !== '$anyOf' && v !== '$absent').map(([k]) => k));
      for (const alternative of alternatives ?? []) {
        for (const [k, v] of Object.entries(alternative)) if (k !== '$exact' && v !== '$absent') named.add(k);
      }
      const extra = Object.keys(actual).filter((k) => !named.has(k)).sort();
      if (extra.length) throw new Mismatch(`${path}: unexpected keys ${describe(extra)} (object was ${describe(actual)})`);
    }
    return result;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) throw new Mismatch(`${path}: expected an array, got ${describe(actual)}`);
    if (expected.length !== actual.length) {
      throw new Mismatch(`${path}: expected ${expected.length} elements, got ${actual.length}: ${describe(actual)}`);
    }
    let result = captures;
    expected.forEach((e, index) => (result = match(e, actual[index], result, `${path}[${index}]`)));
    return result;
  }
  // Scalars: the same JSON type (numbers of either kind alike) and equal.
  const numeric = (type) => type === 'integer' || type === 'number';
  const [te, ta] = [jsonType(expected), jsonType(actual)];
  if ((te !== ta && !(numeric(te) && numeric(ta))) || expected !== actual) {
    throw new Mismatch(`${path}: expected ${describe(expected)}, got ${describe(actual)}`);
  }
  return captures;
}

const SIMPLE = {
  $string: (v) => typeof v === 'string',
  $integer: (v) => typeof v === 'number' && Number.isInteger(v),
  $number: (v) => typeof v === 'number',
  $bool: (v) => typeof v === 'boolean',
  $object: isObject,
  $array: Array.isArray,
  $time: (v) => typeof v === 'string' && RESPONSE_TIME.test(v),
  $id: (v) => typeof v === 'string' && MEMBERSHIP_ID.test(v),
};

function matchPlaceholder(expected, actual, captures, path) {
  if (expected === '$any') return captures;
  if (expected === '$absent') throw new Mismatch(`${path}: expected to be absent, got ${describe(actual)}`);
  if (SIMPLE[expected]) {
    if (!SIMPLE[expected](actual)) throw new Mismatch(`${path}: expected ${expected.slice(1)}, got ${describe(actual)}`);
    return captures;
  }
  const capture = CAPTURE.exec(expected);
  if (!capture) throw new Mismatch(`${path}: unknown placeholder ${expected} in the scenario`);
  const [, kind, name] = capture;
  if (kind === 'id' && !SIMPLE.$id(actual)) throw new Mismatch(`${path}: expected a membership id for ${expected}, got ${describe(actual)}`);
  if (kind === 'time' && !SIMPLE.$time(actual)) throw new Mismatch(`${path}: expected a response time for ${expected}, got ${describe(actual)}`);
  const key = `${kind}:${name}`;
  if (key in captures) {
    if (JSON.stringify(captures[key]) !== JSON.stringify(actual)) {
      throw new Mismatch(`${path}: expected ${expected} = ${describe(captures[key])}, got ${describe(actual)}`);
    }
    return captures;
  }
  if (kind === 'id') {
    for (const [other, value] of Object.entries(captures)) {
      if (other.startsWith('id:') && value === actual) throw new Mismatch(`${path}: ${expected} is ${actual}, which ${other} already is`);
    }
  }
  return { ...captures, [key]: actual };
}

/** Replaces ${S} with the scenario's tag and, in requests, captured "$id:X"-style strings with their values. */
function substitute(value, captures, tag) {
  if (typeof value === 'string') {
    const capture = CAPTURE.exec(value);
    if (capture) {
      const key = `${capture[1]}:${capture[2]}`;
      if (!(key in captures)) throw new Mismatch(`the request uses ${value} before any response captured it`);
      return captures[key];
    }
    return value.replaceAll('${S}', tag);
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, captures, tag));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('${S}', tag), substitute(v, captures, tag)]));
  return value;
}

/** Replaces ${S} in every string of an expected pattern (its placeholders stay for `match`). */
function tagOnly(value, tag) {
  if (typeof value === 'string') return value.replaceAll('${S}', tag);
  if (Array.isArray(value)) return value.map((v) => tagOnly(v, tag));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replaceAll('${S}', tag), tagOnly(v, tag)]));
  return value;
}

// JavaScript numbers hold integers exactly only up to 2^53, and a few scenarios send larger ones (a minSeq
// of 18 digits, a token of the wrong type). Such literals are read as marked strings and written back as
// the very digits of the scenario, through the connection's raw line method.
const BIG = '\u0000integer:';
const BIG_IN_JSON = /"\\u0000integer:(-?\d+)"/g;

function markBigIntegers(text) {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < text.length && /[-+0-9.eE]/.test(text[j])) j++;
      const literal = text.slice(i, j);
      out += /^-?\d+$/.test(literal) && !Number.isSafeInteger(Number(literal)) ? JSON.stringify(BIG + literal) : literal;
      i = j - 1;
    } else {
      out += c;
    }
  }
  return out;
}

export function loadSteps(path) {
  const steps = [];
  readFileSync(path, 'utf8').split('\n').forEach((text, index) => {
    if (!text.trim()) return;
    const step = JSON.parse(markBigIntegers(text));
    const kinds = Object.keys(step).filter((key) => DIRECTIVES.has(key));
    const unknown = Object.keys(step).filter((key) => !STEP_KEYS.has(key));
    if (kinds.length !== 1 || unknown.length) throw new Error(`${path}:${index + 1}: need exactly one directive; unknown keys ${unknown}`);
    steps.push({ number: index + 1, kind: kinds[0], step });
  });
  return steps;
}

const delay = (ms) => new Promise((resolveDelay) => setTimeout(resolveDelay, ms));

/** Settles with the promise, or with `undefined` after `ms` (the promise keeps running). */
function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((resolveLater) => (timer = setTimeout(resolveLater, ms)))]).finally(() => clearTimeout(timer));
}

/** The answer of one request line, tracked so that a later step can see whether it came. */
function track(promise) {
  const tracked = { state: 'pending', value: undefined, error: undefined };
  tracked.done = promise.then(
    (value) => Object.assign(tracked, { state: 'answered', value }),
    (error) => Object.assign(tracked, { state: 'failed', error }),
  );
  return tracked;
}

/** One scenario connection: the answers it is owed, in order, the pushed lines not consumed yet, the close. */
class ScenarioConnection {
  constructor(name) {
    this.name = name;
    this.answers = [];
    this.pushes = [];
    this.isClosed = false;
    this.wake = () => undefined;
  }

  async open(address) {
    this.connection = await Connection.open(address, {
      onPush: (line) => {
        this.pushes.push(line);
        this.wake();
      },
      // A line that answers nothing sent (the busy line of a connection beyond the limit) is this
      // connection's next response.
      onUnsolicited: (line) => {
        const tracked = track(Promise.resolve(line));
        tracked.state = 'answered';
        tracked.value = line;
        this.answers.push(tracked);
        this.wake();
      },
    });
    this.connection.closed.then(() => {
      this.isClosed = true;
      this.wake();
    });
    return this;
  }

  /** Resolves at the next line, push or close, or after `ms`. */
  changed(ms) {
    return within(new Promise((resolveChange) => (this.wake = resolveChange)), ms);
  }

  async nextResponse(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while (this.answers.length === 0) {
      if (this.isClosed) throw new Mismatch(`[${this.name}] expected a response, but the server closed the connection`);
      if (Date.now() >= deadline) throw new Mismatch(`[${this.name}] expected a response, got none within ${timeoutMs / 1000}s`);
      await this.changed(deadline - Date.now());
    }
    const tracked = this.answers.shift();
    await within(tracked.done, Math.max(deadline - Date.now(), 0));
    if (tracked.state === 'answered') return tracked.value;
    if (tracked.state === 'failed') throw new Mismatch(`[${this.name}] expected a response, but ${tracked.error.message}`);
    throw new Mismatch(`[${this.name}] expected a response, got none within ${timeoutMs / 1000}s`);
  }

  async takePush(expected, captures, timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let index = 0; index < this.pushes.length; index++) {
        try {
          const result = match(expected, this.pushes[index], captures);
          this.pushes.splice(index, 1);
          return result;
        } catch (problem) {
          if (!(problem instanceof Mismatch)) throw problem;
        }
      }
      if (Date.now() >= deadline || this.isClosed) break;
      await this.changed(deadline - Date.now());
    }
    if (this.pushes.length) {
      try {
        match(expected, this.pushes[0], captures);
      } catch (problem) {
        throw new Mismatch(`[${this.name}] no pushed line matched within ${timeoutMs / 1000}s; ${this.pushes.length} unmatched, the first differs: ${problem.message}`);
      }
    }
    throw new Mismatch(`[${this.name}] expected a pushed line within ${timeoutMs / 1000}s, got none`);
  }

  async expectNoPush(seconds) {
    await delay(seconds * 1000);
    if (this.pushes.length) throw new Mismatch(`[${this.name}] expected no pushed line, got ${describe(this.pushes[0])}`);
  }

  async expectClosed(timeoutMs) {
    await within(this.connection.closed, timeoutMs);
    const answered = this.answers.find((tracked) => tracked.state === 'answered');
    if (answered) throw new Mismatch(`[${this.name}] expected the connection to close, got ${describe(answered.value)}`);
    if (!this.isClosed) throw new Mismatch(`[${this.name}] expected the server to close the connection within ${timeoutMs / 1000}s`);
  }

  /** A response no step expected, after giving the answers in flight a moment to come. */
  async unexpected() {
    if (this.answers.length === 0) return undefined;
    await within(Promise.all(this.answers.map((tracked) => tracked.done)), 200);
    return this.answers.find((tracked) => tracked.state === 'answered');
  }
}

/**
 * Runs one scenario against the server at `address`; resolves with `undefined` when it passed, else the
 * first mismatch ("line N (kind): ...").
 */
export async function runScenario(path, address, { timeoutSeconds = 5 } = {}) {
  const tag = `${basename(path, '.ndjson')}-${randomBytes(4).toString('hex')}`;
  const connections = new Map();
  let captures = {};
  const connectionNamed = async (name) => {
    if (!connections.has(name)) connections.set(name, await new ScenarioConnection(name).open(address));
    return connections.get(name);
  };
  try {
    for (const { number, kind, step } of loadSteps(path)) {
      const name = step.connection ?? 'main';
      const timeoutMs = (step.timeout ?? timeoutSeconds) * 1000;
      try {
        if (kind === 'comment') continue;
        if (kind === 'sleep') {
          await delay(step.sleep * 1000);
        } else if (kind === 'send') {
          const request = substitute(step.send, captures, tag);
          const conn = await connectionNamed(name);
          const text = JSON.stringify(request);
          if (text.includes('\\u0000integer:')) conn.answers.push(...conn.connection.writeRaw(text.replace(BIG_IN_JSON, '$1') + '\n').map(track));
          else conn.answers.push(track(conn.connection.request(request)));
        } else if (kind === 'sendRaw') {
          let text = substitute(step.sendRaw, captures, tag).repeat(step.repeat ?? 1);
          if (step.newline ?? true) text += '\n';
          const conn = await connectionNamed(name);
          conn.answers.push(...conn.connection.writeRaw(text).map(track));
        } else if (kind === 'expect') {
          const response = await (await connectionNamed(name)).nextResponse(timeoutMs);
          captures = match(tagOnly(step.expect, tag), response, captures);
        } else if (kind === 'expectPush') {
          captures = await (await connectionNamed(name)).takePush(tagOnly(step.expectPush, tag), captures, timeoutMs);
        } else if (kind === 'expectNoPush') {
          await (await connectionNamed(name)).expectNoPush(step.expectNoPush);
        } else if (kind === 'expectClosed') {
          await (await connectionNamed(name)).expectClosed(timeoutMs);
        }
      } catch (problem) {
        if (problem instanceof Mismatch) return `line ${number} (${kind}): ${problem.message}`;
        return `line ${number} (${kind}) [${name}]: ${problem.stack ?? problem}`;
      }
    }
    for (const conn of connections.values()) {
      const extra = await conn.unexpected();
      if (extra) return `end [${conn.name}]: a response the scenario did not expect: ${describe(extra.value)}`;
    }
    return undefined;
  } finally {
    for (const conn of connections.values()) conn.connection.destroy();
  }
}
