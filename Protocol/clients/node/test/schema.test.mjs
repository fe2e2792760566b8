// Keeps the client in step with Protocol/schema/: every operation (with the fields it takes) and every
// error code of the schemas must be known to the client, and the client must know none the schemas lack.
// A new operation, field or code in the schema fails here, naming what to add.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as entitled from '../dist/index.js';
import { PROTOCOL_DIR } from './helpers/server.mjs';

const requestSchema = JSON.parse(readFileSync(join(PROTOCOL_DIR, 'schema', 'request.schema.json'), 'utf8'));
const responseSchema = JSON.parse(readFileSync(join(PROTOCOL_DIR, 'schema', 'response.schema.json'), 'utf8'));

function difference(name, inSchema, inClient) {
  const lacks = [...inSchema].filter((x) => !inClient.has(x)).sort();
  const extra = [...inClient].filter((x) => !inSchema.has(x)).sort();
  const problems = [];
  if (lacks.length) problems.push(`the client lacks ${name} ${lacks.join(', ')}`);
  if (extra.length) problems.push(`the client has ${name} the schema does not: ${extra.join(', ')}`);
  return problems;
}

test('every operation of request.schema.json, with its fields, and no other', () => {
  const operations = requestSchema.$defs.operations;
  const problems = difference('operations', new Set(Object.keys(operations)), new Set(Object.keys(entitled.OPERATION_FIELDS)));
  for (const [op, branch] of Object.entries(operations)) {
    const fields = new Set(branch.propertyNames.enum.filter((field) => field !== 'op' && field !== 'id'));
    const known = entitled.OPERATION_FIELDS[op];
    if (known) problems.push(...difference(`fields of ${op}:`, fields, new Set(known)));
  }
  assert.deepEqual(problems, []);
});

test('every operation answered in response.schema.json is one the client sends', () => {
  const answered = new Set(Object.keys(responseSchema.$defs.success));
  assert.deepEqual(difference('answers of operations', answered, new Set(Object.keys(entitled.OPERATION_FIELDS))), []);
});

test('every operation has a Client method, or a documented place', () => {
  const missing = [];
  for (const [op, method] of Object.entries(entitled.OPERATION_METHODS)) {
    if (/^[a-z]+$/i.test(method)) {
      if (typeof entitled.Client.prototype[method] !== 'function') missing.push(`${op}: Client.${method}`);
    } else if (method === 'WatchStream.close') {
      if (typeof entitled.WatchStream.prototype.close !== 'function') missing.push(`${op}: ${method}`);
    }
  }
  assert.deepEqual(missing, []);
  assert.deepEqual(Object.keys(entitled.OPERATION_METHODS).sort(), Object.keys(entitled.OPERATION_FIELDS).sort());
});

test('every error code of response.schema.json has its class, and no other', () => {
  const codes = new Set(responseSchema.$defs.errorCode.enum);
  assert.deepEqual(difference('error codes', codes, new Set(Object.keys(entitled.ERROR_CLASSES))), []);
  for (const code of codes) {
    const error = entitled.errorFromResponse({ ok: false, error: { code, message: 'm' } }, 'check');
    assert.equal(error.code, code);
    assert.ok(error instanceof entitled.ServerError && error instanceof entitled.EntitledError, code);
    assert.equal(error.name, `${code.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('')}Error`);
  }
});

test('the read operations are the schema operations that change nothing', () => {
  for (const op of entitled.READ_OPERATIONS) {
    assert.ok(op in entitled.OPERATION_FIELDS, op);
    assert.equal(entitled.isWriteOperation(op), false, op);
  }
  for (const op of ['grant', 'claim', 'revoke', 'extend', 'define', 'undefine', 'event', 'erase']) {
    assert.equal(entitled.isWriteOperation(op), true, op);
  }
});
