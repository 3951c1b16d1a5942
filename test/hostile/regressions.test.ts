/**
 * Bugs the hostile properties found, each pinned by the smallest request that showed it (all were
 * 500s or wrong error locations before the fix).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, fixture, hostile, jsonRequest, Raw, type Fixture } from './harness.js';

let f: Fixture;
beforeAll(async () => {
  f = await fixture();
});
afterAll(async () => {
  await f.close();
});

const oneParam = (p: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ name: 'r', method: 'random', batch_size: 1, parameters: [{ name: 'p', ...p }], ...extra });

async function rejected(req: Parameters<typeof jsonRequest>, status: number): Promise<{ code: string; errors?: { path: string; message: string }[] }> {
  const res = await hostile(f, jsonRequest(...req));
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
}

describe('effective priors that overflow or underflow a double', () => {
  // IEEE 754 doubles: the largest is ≈1.80e308, the smallest positive ≈4.9e-324, so
  // (2e308 − 0)/4 is fine but bounds [-1e308, 1e308] have an infinite width, (1e200)² = ∞, (1e-170)² = 0.
  it.each([
    ['bounds whose width overflows', { bounds: [-1e308, 1e308] }, '/parameters/0/bounds'],
    ['bounds whose midpoint is fine but whose derived std² overflows', { bounds: [0, 1e308] }, '/parameters/0/bounds'],
    ['bounds so close that the derived variance underflows to 0', { bounds: [0, 5e-324] }, '/parameters/0/bounds'],
    ['a std whose square overflows', { prior: { mean: 0, std: 1e200 } }, '/parameters/0/prior/std'],
    ['a std whose square underflows to 0', { prior: { mean: 0, std: 1e-170 } }, '/parameters/0/prior/std'],
  ])('%s → 400 at its pointer (was a 500)', async (_name, p, path) => {
    const body = await rejected(['POST', '/v1/studies', oneParam(p)], 400);
    expect(body.code).toBe('validation_failed');
    expect(body.errors?.map((e) => e.path)).toEqual([path]);
  });

  it('a joint covariance whose entries overflow once symmetrised → 400 at /prior/covariance', async () => {
    const body = await rejected(['POST', '/v1/studies', { name: 'j', parameters: [{ name: 'a' }, { name: 'b' }], prior: { mean: [0, 0], covariance: [[1e308, 1.7e308], [1.7e308, 1e308]] } }], 400);
    expect(body.errors?.map((e) => e.path)).toEqual(['/prior/covariance']);
  });

  it('std just inside the range is accepted (1e150² = 1e300 is finite)', async () => {
    const res = await hostile(f, jsonRequest('POST', '/v1/studies', oneParam({ prior: { mean: 0, std: 1e150 } })));
    expect(res.statusCode).toBe(201);
  });
});

describe('deeply nested free-form JSON', () => {
  // JSON.stringify recurses; 100 000 levels overflow the stack (RangeError → 500 before the fix).
  const deep = new Raw('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000));

  it('metadata nested 100 000 levels on create → 400 at /metadata', async () => {
    const body = await rejected(['POST', '/v1/studies', oneParam({ bounds: [0, 1] }, { metadata: { x: deep } })], 400);
    expect(body.errors).toEqual([{ path: '/metadata', message: 'must nest at most 64 levels deep' }]);
  });

  it('and on update → 400, the study unchanged', async () => {
    const body = await rejected(['PATCH', `/v1/studies/${f.a}`, { metadata: { x: deep } }], 400);
    expect(body.errors?.[0]?.path).toBe('/metadata');
  });

  it('64 levels are accepted', async () => {
    const ok = new Raw('{"a":'.repeat(63) + '1' + '}'.repeat(63));
    const res = await hostile(f, jsonRequest('POST', '/v1/studies', oneParam({ bounds: [0, 1] }, { metadata: { x: ok } })));
    expect(res.statusCode).toBe(201);
  });
});

describe('error locations are JSON pointers (RFC 6901)', () => {
  it('unknown fields named "~" and "a/b" are reported at /~0 and /a~1b', async () => {
    const body = await rejected(['POST', '/v1/studies', { ...oneParam({ bounds: [0, 1] }), '~': 1, 'a/b': 2 }], 400);
    expect(body.errors?.map((e) => e.path).sort()).toEqual(['/a~1b', '/~0']);
  });

  it('an observation matching neither form names the offending field, not just "invalid input" at the observation', async () => {
    const badKey = await rejected(['POST', `/v1/studies/${f.a}/observations`, { observations: [{ parameters: { 'x/y': 1 }, value: 1 }] }], 400);
    expect(badKey.errors).toEqual([{ path: '/observations/0/parameters/x~1y', message: 'Invalid key in record' }]);
    const badValue = await rejected(['POST', `/v1/studies/${f.a}/observations`, { observations: [{ trial_id: 1, value: '1' }] }], 400);
    expect(badValue.errors?.map((e) => e.path)).toEqual(['/observations/0/value']);
  });
});

describe('errors raised before routing', () => {
  it('an id longer than the router allows → 414 problem+json with the request id', async () => {
    const req = { method: 'GET' as const, url: `/v1/studies/${'x'.repeat(150)}` };
    const res = await f.app.inject(req);
    expect(res.statusCode).toBe(414);
    expectProblem(req, res);
    expect(res.json().code).toBe('path_segment_too_long');
  });

  it('an id of up to 128 characters (the schema\'s limit) reaches the route: 404 study not found, not 414', async () => {
    const req = { method: 'GET' as const, url: `/v1/studies/${'x'.repeat(128)}` };
    const res = await f.app.inject(req);
    expect(res.statusCode).toBe(404);
    expectProblem(req, res);
    const over = await f.app.inject({ method: 'GET', url: `/v1/studies/${'x'.repeat(129)}` });
    expect(over.statusCode).toBe(414);
  });

  it('a URL that is not valid percent-encoding → 400 problem+json', async () => {
    const req = { method: 'GET' as const, url: '/v1/studies/%E0%A4%A' };
    const res = await f.app.inject(req);
    expect(res.statusCode).toBe(400);
    expectProblem(req, res);
  });
});

describe('imported engine states the strategy cannot work from (accepted before, then 500 or 503 on later requests)', () => {
  type Doc = { engine_states: { state: Record<string, unknown> }[] } & Record<string, unknown>;
  const exportOf = async (id: string) => (await f.app.inject({ method: 'GET', url: `/v1/studies/${id}/export` })).json() as Doc;
  /** The document with the last engine state's fields replaced. */
  const withState = (doc: Doc, patch: (st: Record<string, unknown>) => void): Doc => {
    const copy = structuredClone(doc);
    patch(copy.engine_states[copy.engine_states.length - 1]!.state);
    return copy;
  };
  const last = (doc: Doc) => doc.engine_states.length - 1;

  it('a covariance that is not positive definite (/history computed NaN std) → 400 at …/state/cov', async () => {
    const doc = await exportOf(f.a);
    const body = await rejected(['POST', '/v1/studies/import', withState(doc, (st) => ((st.cov as number[][])[2]![0] = -1e308))], 400);
    expect(body.errors?.map((e) => e.path)).toEqual([`/engine_states/${last(doc)}/state/cov`]);
  });

  it('a covariance finite internally but infinite in user units (L0 Σ L0ᵀ overflows) → 400 at …/state/mean', async () => {
    const doc = await exportOf(f.a);
    const body = await rejected(['POST', '/v1/studies/import', withState(doc, (st) => ((st.cov as number[][])[0]![0] = 1e308))], 400);
    expect(body.errors?.map((e) => e.path)).toEqual([`/engine_states/${last(doc)}/state/mean`]);
  });

  it('a generator state the engine cannot restore (every suggestion was a 503) → 400 at …/state/rng', async () => {
    const doc = await exportOf(f.a);
    for (const rng of ['\u0000', { kind: 'xoroshiro128plus', words: [0, 0, 0, 0] }, { kind: 'xoroshiro128plus', words: [1, 2, 3] }]) {
      const body = await rejected(['POST', '/v1/studies/import', withState(doc, (st) => (st.rng = rng))], 400);
      expect(body.errors?.map((e) => e.path)).toEqual([`/engine_states/${last(doc)}/state/rng`]);
    }
  });

  it('a state without its version (the next commit hit a NOT NULL constraint) → 400 at …/state/version', async () => {
    const doc = await exportOf(f.a);
    const body = await rejected(['POST', '/v1/studies/import', withState(doc, (st) => delete st.version)], 400);
    expect(body.errors?.map((e) => e.path)).toEqual([`/engine_states/${last(doc)}/state/version`]);
  });

  it('a CMA-ES state whose step size is not a number (every suggestion was a 503 non_finite) → 400 at the state', async () => {
    const created = await f.app.inject(jsonRequest('POST', '/v1/studies', { name: 'c', method: 'cmaes', batch_size: 2, parameters: [{ name: 'x', bounds: [-1, 1] }, { name: 'y', bounds: [-1, 1] }] }));
    const doc = await exportOf(created.json().id);
    const body = await rejected(['POST', '/v1/studies/import', withState(doc, (st) => (st.sigma = 'NaN'))], 400);
    expect(body.errors?.[0]?.path).toBe(`/engine_states/${last(doc)}/state`);
    expect(body.errors?.[0]?.message).toMatch(/cannot resume/);
    await f.app.inject({ method: 'DELETE', url: created.headers.location as string });
  });
});

describe('text the database cannot store as sent', () => {
  // JSON may carry a lone UTF-16 surrogate; UTF-8 has no encoding for it, so SQLite kept U+FFFD
  // instead and the created study silently differed from the request.
  const raw = (name: string) => ({ method: 'POST' as const, url: '/v1/studies', payload: `{"name":"${name}","method":"random","batch_size":1,"parameters":[{"name":"x","bounds":[0,1]}]}`, headers: { 'content-type': 'application/json' } });

  it('a study name with a lone surrogate → 400 at /name', async () => {
    const res = await hostile(f, raw('a\\ud800b'));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['/name']);
  });

  it('a paired surrogate (an emoji) is stored exactly', async () => {
    const res = await hostile(f, raw('\\ud83d\\udca5'), { keep: true });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('💥');
    const got = await f.app.inject({ method: 'GET', url: res.headers.location as string });
    expect(got.json().name).toBe('💥');
    await f.app.inject({ method: 'DELETE', url: res.headers.location as string });
  });

  it('a failure reason with a lone surrogate → 400 at /reason', async () => {
    const res = await hostile(f, { method: 'POST', url: `/v1/studies/${f.b}/trials/1/fail`, payload: '{"reason":"\\udfff"}', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['/reason']);
  });
});
