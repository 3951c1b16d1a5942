/** Hostile input on the study routes: create, list, get, update, delete. */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RAW_SEGMENTS, deepJson, extraKey, hostileId, hostileQueryValue, hostileString, mutations, mutate, rawNumber, wrongValue } from './arbitraries.js';
import { tamper, tampered } from './tokens.js';
import { enc, fixture, runs, hostile, jsonRequest, Raw, route, type Fixture } from './harness.js';

const RUNS = runs(40);

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

const validCreate = {
  name: 'valid',
  direction: 'maximize',
  parameters: [
    { name: 'a', type: 'float', scale: 'linear', bounds: [-1, 1], prior: { mean: 0, std: 0.5 } },
    { name: 'b', type: 'int', scale: 'log', bounds: [1, 100] },
    { name: 'c', prior: { mean: 3, std: 2 } },
  ],
  method: 'cmaes',
  batch_size: 4,
  options: { sigma0: 1 },
  seed: 3,
  max_trials: 50,
  lease_seconds: 60,
  known_optimum: 0,
  metadata: { team: 'x', tags: ['a', 'b'] },
};

const validJoint = {
  name: 'joint',
  parameters: [{ name: 'a' }, { name: 'b' }],
  prior: { mean: [0, 1], covariance: [[1, 0.5], [0.5, 2]] },
};

/** A number as a hostile client may send it: raw extreme tokens, or any double. */
const num = fc.oneof(rawNumber, fc.double(), fc.constantFrom(0, -0, 1e-300, 1e300, 1e154, 1e155, -1e308, 1e308));

describe(route('POST /v1/studies'), () => {
  it('mutations of a valid body (wrong types, missing and extra fields, extreme numbers) are created or rejected, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(validCreate, validJoint), mutations, async (valid, ms) => {
        await hostile(f, jsonRequest('POST', '/v1/studies', mutate(valid, ms)));
      }),
      RUNS,
    );
  });

  it('priors: zero, negative, tiny and huge std; means and bounds at the extremes of a double', async () => {
    await fc.assert(
      fc.asyncProperty(num, num, fc.option(fc.tuple(num, num)), fc.constantFrom('linear', 'log'), fc.constantFrom('float', 'int'), async (mean, std, bounds, scale, type) => {
        const p = { name: 'p', scale, type, prior: { mean, std }, ...(bounds ? { bounds } : {}) };
        await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'prior', method: 'random', batch_size: 1, parameters: [p] }));
        // The same parameter with bounds only (the default prior is derived from their width).
        if (bounds) await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'bounds', method: 'random', batch_size: 1, parameters: [{ name: 'p', scale, type, bounds }] }));
      }),
      RUNS,
    );
  });

  it('joint priors: asymmetric, non-positive-definite, wrongly shaped and extreme covariances', async () => {
    const d = fc.integer({ min: 1, max: 4 });
    const matrix = d.chain((n) =>
      fc.tuple(
        fc.constant(n),
        fc.oneof(
          // any entries, mostly not symmetric
          fc.array(fc.array(num, { minLength: n, maxLength: n }), { minLength: n, maxLength: n }),
          // symmetric but possibly indefinite or singular
          fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: n * n, maxLength: n * n }).map((v) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => v[Math.min(i, j) * n + Math.max(i, j)]!))),
          // a scaled identity, from harmless to overflowing
          fc.constantFrom(1e-320, 1e-300, 1, 1e150, 1e300, 1e308).map((s) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? s : 0)))),
          // the wrong shape
          fc.array(fc.array(fc.double({ noNaN: true }), { maxLength: n + 1 }), { maxLength: n + 1 }),
        ),
        fc.array(num, { minLength: 0, maxLength: n + 1 }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(matrix, fc.constantFrom('random', 'cmaes', 'xnes', 'prob-cmaes'), async ([n, covariance, mean], method) => {
        const parameters = Array.from({ length: n }, (_, i) => ({ name: `p${i}` }));
        await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'joint', method, batch_size: 2, options: method === 'prob-cmaes' ? { candidates: 64 } : {}, parameters, prior: { mean, covariance } }));
      }),
      runs(50),
    );
  });

  it('10 000 parameters, deeply nested metadata, and names with control, unicode and SQL-looking characters', async () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ({ name: `p${i}`, bounds: [0, 1] }));
    await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'many', parameters: many }));
    await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'many', parameters: [{ name: 'x', bounds: [0, 1] }], prior: { mean: new Array(10_000).fill(0), covariance: [new Array(10_000).fill(1)] } }));
    await fc.assert(
      fc.asyncProperty(hostileString, hostileString, deepJson, extraKey, async (name, pname, deep, key) => {
        await hostile(f, jsonRequest('POST', '/v1/studies', { name, method: 'random', batch_size: 1, parameters: [{ name: pname, bounds: [0, 1] }] }));
        await hostile(f, jsonRequest('POST', '/v1/studies', { name: 'deep', method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [0, 1] }], metadata: { [key]: deep } }));
      }),
      RUNS,
    );
  });

  it('whole bodies that are not a study: other JSON values, deep nesting, other media types', async () => {
    const body = fc.oneof(wrongValue.map((v) => ({ text: new Raw(String(v instanceof Raw ? v.text : JSON.stringify(v) ?? 'null')), type: 'application/json' })), fc.record({ text: fc.oneof(hostileString, fc.constantFrom('{', '{"name":', '{"a":1}{', '\u0000', '')).map((s) => new Raw(s)), type: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/problem+json', 'multipart/form-data') }));
    await fc.assert(
      fc.asyncProperty(body, async ({ text, type }) => {
        await hostile(f, { method: 'POST', url: '/v1/studies', payload: text.text, headers: { 'content-type': type } });
      }),
      RUNS,
    );
  });
});

describe(route('GET /v1/studies'), () => {
  it('hostile page_size and page_token values, and tampered tokens', async () => {
    const first = await f.app.inject({ method: 'GET', url: '/v1/studies?page_size=1' });
    const token = first.json().next_page_token as string;
    const trialsToken = (await f.app.inject({ method: 'GET', url: `/v1/studies/${f.a}/trials?page_size=1` })).json().next_page_token as string;
    expect(token).toBeTruthy();
    expect(trialsToken).toBeTruthy();
    await fc.assert(
      fc.asyncProperty(hostileQueryValue, hostileQueryValue, tamper, extraKey, async (size, tok, t, key) => {
        await hostile(f, { method: 'GET', url: `/v1/studies?page_size=${enc(size)}&page_token=${enc(tok)}` }, { snap: false });
        const bad = tampered(token, trialsToken, t);
        const res = await hostile(f, { method: 'GET', url: `/v1/studies?page_token=${enc(bad)}` }, { snap: false });
        if (bad !== token) expect(res.statusCode).toBe(400);
        await hostile(f, { method: 'GET', url: `/v1/studies?${enc(key || 'k')}=1&page_size=1&page_size=2` }, { snap: false });
      }),
      RUNS,
    );
  });
});

describe(route('GET /v1/studies/{study_id}'), () => {
  it('hostile study ids are 404 (or 400), never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(hostileId, async (id) => {
        const res = await hostile(f, { method: 'GET', url: `/v1/studies/${enc(id)}` }, { snap: false });
        expect([400, 404, 414]).toContain(res.statusCode);
      }),
      RUNS,
    );
    for (const raw of RAW_SEGMENTS) {
      const res = await hostile(f, { method: 'GET', url: `/v1/studies/${raw}` }, { snap: false });
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
    }
  });
});

describe(route('PATCH /v1/studies/{study_id}'), () => {
  it('mutated update bodies on a real study, and any body on unknown ids', async () => {
    const valid = { name: 'renamed', metadata: { k: [1, 2, { z: null }] }, state: 'PAUSED' };
    await fc.assert(
      fc.asyncProperty(mutations, hostileId, fc.constantFrom('a', 'b'), async (ms, id, which) => {
        const body = mutate(valid, ms);
        await hostile(f, jsonRequest('PATCH', `/v1/studies/${which === 'a' ? f.a : f.b}`, body));
        await hostile(f, jsonRequest('PATCH', `/v1/studies/${enc(id)}`, body));
      }),
      RUNS,
    );
  });
});

describe(route('DELETE /v1/studies/{study_id}'), () => {
  it('hostile ids delete nothing', async () => {
    await fc.assert(
      fc.asyncProperty(hostileId, wrongValue, async (id, body) => {
        const res = await hostile(f, { method: 'DELETE', url: `/v1/studies/${enc(id)}`, payload: jsonRequest('DELETE', '', body).payload, headers: { 'content-type': 'application/json' } });
        expect(res.statusCode).toBeGreaterThanOrEqual(400);
      }),
      RUNS,
    );
  });
});
