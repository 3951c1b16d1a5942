/**
 * The same hostile bodies and headers sent to every route of the OpenAPI document (so a route
 * added later is covered without anyone remembering it): bodies that are not JSON, empty,
 * prototype-poisoning, deeply nested, of another media type, NaN/Infinity as JSON text, and
 * malformed Authorization headers. Each answer is a success or a 4xx problem, and a 4xx changes nothing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture, hostile, runs, type Fixture } from './harness.js';

let f: Fixture;
let ops: { method: string; path: string }[];
beforeAll(async () => {
  f = await fixture();
  const doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => ({ method: m.toUpperCase(), path })));
});
afterAll(async () => {
  await f.close();
});

const BODIES = [
  '',
  ' ',
  'null',
  '[]',
  '"text"',
  '{',
  '{"a":1}{"b":2}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '{"value":NaN}',
  '{"value":Infinity}',
  '{"value":1e999}',
  '{"observations":[{"trial_id":4,"value":-0}],"observations":[]}',
  '[' .repeat(50_000) + ']'.repeat(50_000),
  '\u0000\u0001\u0002',
  '\ufeff{}',
];
const TYPES = ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'application/json; charset=utf-16', 'application/merge-patch+json'];
const AUTH = [undefined, '', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer a b', `Bearer ${'x'.repeat(5000)}`, "Bearer ' OR 1=1 --"];

describe('every documented route', () => {
  it('hostile bodies, media types and Authorization headers: a success or a 4xx problem that changes nothing', async () => {
    expect(ops.length).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.constantFrom(...BODIES), fc.constantFrom(...TYPES), fc.constantFrom(...AUTH), async (k, body, type, auth) => {
        const op = ops[k % ops.length]!;
        // A DELETE that succeeds would leave the rest of the run without its study.
        const url = op.path.replace('{study_id}', op.method === 'DELETE' ? 'study-9999' : f.a).replace('{trial_id}', '4');
        const headers: Record<string, string> = { 'content-type': type };
        if (auth !== undefined) headers.authorization = auth;
        await hostile(f, { method: op.method as 'POST', url, payload: body, headers });
      }),
      runs(60),
    );
  });
});
