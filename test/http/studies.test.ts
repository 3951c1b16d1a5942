import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

const create = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/studies', payload: body });

describe('POST /v1/studies', () => {
  it('creates a study: 201, Location, effective prior in each parameter\'s scale, effective options', async () => {
    const res = await create(studyBody({ method: 'cmaes', options: { sigma0: 0.5 }, metadata: { owner: 'a' } }));
    expect(res.statusCode).toBe(201);
    const s = res.json();
    expect(res.headers.location).toBe(`/v1/studies/${s.id}`);
    expect(s).toMatchObject({
      id: 'study-0001',
      name: 'quadratic',
      direction: 'minimize',
      method: 'cmaes',
      batch_size: 3,
      seed: 12345,
      lease_seconds: 600,
      max_trials: null,
      known_optimum: null,
      state: 'ACTIVE',
      reason: null,
      generation: 0,
      metadata: { owner: 'a' },
      options: { sigma0: 0.5, active: true },
      trial_counts: { REQUESTED: 0, ACTIVE: 0, COMPLETED: 0, FAILED: 0, ABANDONED: 0 },
      created_at: '2025-01-01T12:00:00.000Z',
    });
    // x: given prior; lr: log scale, default from bounds: mean = (ln 1e-5 + ln 1)/2, std = width/4.
    const lnLo = Math.log(1e-5);
    expect(s.parameters[0]).toEqual({ name: 'x', type: 'float', scale: 'linear', bounds: [-5, 5], step: null, prior: { mean: 1, std: 2 } });
    expect(s.parameters[1].prior.mean).toBeCloseTo(lnLo / 2, 12);
    expect(s.parameters[1].prior.std).toBeCloseTo(-lnLo / 4, 12);
    expect(s.prior.mean[1]).toBeCloseTo(lnLo / 2, 12);
    expect(s.prior.covariance[0]).toEqual([4, 0]);
    expect(s.prior.covariance[1][1]).toBeCloseTo((lnLo / 4) ** 2, 12);
    expect(s.prior.std[0]).toBe(2);
  });

  it('fills defaults: prob-cmaes with its default-profile options, minimize, batch 3', async () => {
    const s = (await create(studyBody())).json();
    expect(s.method).toBe('prob-cmaes');
    // The public options only, with their defaults; the ablation switches are no study options.
    // start_phase: Powell's start phase in the default profile, off in the paper's (docs/ALGORITHM.md §29).
    expect(s.options).toEqual({ profile: 'default', start_phase: 'powell', learning_rate_mean: 1, learning_rate_cov: 0.5, learning_rate_cov_quadratic: 1, candidates: 1000, active_set_cap: 50, gp_restarts: 0 });
    expect((await create(studyBody({ options: { profile: 'paper' } }))).json().options).toMatchObject({ profile: 'paper', start_phase: 'off', active_set_cap: 0, learning_rate_cov_quadratic: 0.5 });
  });

  it('accepts a joint prior and echoes it with per-parameter std', async () => {
    const res = await create({
      name: 'joint',
      parameters: [{ name: 'a' }, { name: 'b', bounds: [-1, 1] }],
      prior: { mean: [0, 0.5], covariance: [[4, 1], [1, 1]] },
    });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    expect(s.prior).toEqual({ mean: [0, 0.5], covariance: [[4, 1], [1, 1]], std: [2, 1] });
    expect(s.parameters.map((p: { prior: unknown }) => p.prior)).toEqual([{ mean: 0, std: 2 }, { mean: 0.5, std: 1 }]);
  });

  it('round-trips through GET', async () => {
    const created = (await create(studyBody({ seed: 99 }))).json();
    const got = await app.inject({ method: 'GET', url: `/v1/studies/${created.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(created);
  });

  const cases: [string, Record<string, unknown>, { path: string; message: RegExp }[]][] = [
    ['negative std', studyBody({ parameters: [{ name: 'x', prior: { mean: 0, std: -1 } }] }), [{ path: '/parameters/0/prior/std', message: />0/ }]],
    ['unordered bounds', studyBody({ parameters: [{ name: 'x', bounds: [1, 0] }] }), [{ path: '/parameters/0/bounds', message: /low < high/ }]],
    ['bad parameter name', studyBody({ parameters: [{ name: '1x', bounds: [0, 1] }] }), [{ path: '/parameters/0/name', message: /must match/ }]],
    ['duplicate names', studyBody({ parameters: [{ name: 'x', bounds: [0, 1] }, { name: 'x', bounds: [0, 1] }] }), [{ path: '/parameters/1/name', message: /duplicates/ }]],
    ['log scale with non-positive bounds', studyBody({ parameters: [{ name: 'x', scale: 'log', bounds: [0, 1] }] }), [{ path: '/parameters/0/bounds/0', message: /bounds > 0/ }]],
    ['prior mean outside bounds', studyBody({ parameters: [{ name: 'x', bounds: [0, 1], prior: { mean: 2, std: 1 } }] }), [{ path: '/parameters/0/prior/mean', message: /within the bounds/ }]],
    ['log prior mean compared in ln units', studyBody({ parameters: [{ name: 'w', scale: 'log', bounds: [16, 1024], prior: { mean: 100, std: 1 } }] }), [{ path: '/parameters/0/prior/mean', message: /ln\(value\)/ }]],
    ['no prior and no bounds', studyBody({ parameters: [{ name: 'x' }] }), [{ path: '/parameters/0/prior', message: /needs a prior/ }]],
    ['non-integer bounds for int', studyBody({ parameters: [{ name: 'n', type: 'int', bounds: [0.5, 3] }] }), [{ path: '/parameters/0/bounds', message: /integer bounds/ }]],
    ['both prior forms', studyBody({ parameters: [{ name: 'x', prior: { mean: 0, std: 1 } }], prior: { mean: [0], covariance: [[1]] } }), [{ path: '/parameters/0/prior', message: /not both/ }]],
    ['asymmetric covariance', { name: 'j', parameters: [{ name: 'a' }, { name: 'b' }], prior: { mean: [0, 0], covariance: [[1, 0.5], [0.4, 1]] } }, [{ path: '/prior/covariance', message: /symmetric/ }]],
    ['indefinite covariance', { name: 'j', parameters: [{ name: 'a' }, { name: 'b' }], prior: { mean: [0, 0], covariance: [[1, 2], [2, 1]] } }, [{ path: '/prior/covariance', message: /positive definite/ }]],
    ['covariance of the wrong shape', { name: 'j', parameters: [{ name: 'a' }, { name: 'b' }], prior: { mean: [0], covariance: [[1]] } }, [{ path: '/prior/mean', message: /one entry per parameter/ }, { path: '/prior/covariance', message: /2×2/ }]],
    ['joint mean outside bounds', { name: 'j', parameters: [{ name: 'a', bounds: [0, 1] }], prior: { mean: [3], covariance: [[1]] } }, [{ path: '/prior/mean/0', message: /within the bounds of a/ }]],
    ['unknown method', studyBody({ method: 'sgd' }), [{ path: '/method', message: /prob-cmaes/ }]],
    ['unknown option', studyBody({ method: 'cmaes', options: { candidates: 10 } }), [{ path: '/options/candidates', message: /not an option of method cmaes/ }]],
    ['option out of range', studyBody({ method: 'bo', options: { mc_samples: 8 } }), [{ path: '/options/mc_samples', message: />=16/ }]],
    ['non-integer option', studyBody({ options: { candidates: 10.5 } }), [{ path: '/options/candidates', message: /int/ }]],
    ['wrong option type', studyBody({ options: { profile: 1 } }), [{ path: '/options/profile', message: /default|paper/ }]],
    ['a benchmark-only switch', studyBody({ options: { include_mean: false } }), [{ path: '/options/include_mean', message: /not an option of method prob-cmaes/ }]],
    ['lq-cmaes: Kendall τ threshold out of range', studyBody({ method: 'lq-cmaes', options: { tau_threshold: 1.5 } }), [{ path: '/options/tau_threshold', message: /<=1/ }]],
    ['lq-cmaes: τ threshold −1 (every ranking would pass)', studyBody({ method: 'lq-cmaes', options: { tau_threshold: -1 } }), [{ path: '/options/tau_threshold', message: />-1/ }]],
    ['lq-cmaes: inject_optimum not a boolean', studyBody({ method: 'lq-cmaes', options: { inject_optimum: 1 } }), [{ path: '/options/inject_optimum', message: /boolean/ }]],
    ['batch_size 1 for lq-cmaes', studyBody({ method: 'lq-cmaes', batch_size: 1 }), [{ path: '/batch_size', message: /≥ 2/ }]],
    ['batch_size 1 for a rank-based ES', studyBody({ method: 'cmaes', batch_size: 1 }), [{ path: '/batch_size', message: /≥ 2/ }]],
    ['batch_size too large', studyBody({ batch_size: 101 }), [{ path: '/batch_size', message: /<=100/ }]],
    ['unknown top-level field', studyBody({ batchsize: 3 }), [{ path: '/batchsize', message: /unknown field/ }]],
    ['name too long', studyBody({ name: 'n'.repeat(201) }), [{ path: '/name', message: /200/ }]],
    ['metadata too large', studyBody({ metadata: { blob: 'x'.repeat(17 * 1024) } }), [{ path: '/metadata', message: /16384 bytes/ }]],
    ['metadata not an object', studyBody({ metadata: [1] }), [{ path: '/metadata', message: /expected record/ }]],
    ['too many parameters', studyBody({ parameters: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, bounds: [0, 1] })) }), [{ path: '/parameters', message: /100/ }]],
    ['negative seed', studyBody({ seed: -1 }), [{ path: '/seed', message: />=0/ }]],
    ['bad direction', studyBody({ direction: 'down' }), [{ path: '/direction', message: /minimize/ }]],
  ];

  it.each(cases)('400 validation_failed: %s', async (_name, body, expected) => {
    const res = await create(body);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const p = res.json();
    expect(p).toMatchObject({ status: 400, code: 'validation_failed', type: 'urn:probnes:problem:validation_failed', instance: '/v1/studies' });
    for (const e of expected) {
      expect(p.errors, JSON.stringify(p.errors)).toContainEqual({ path: e.path, message: expect.stringMatching(e.message) });
    }
  });

  it('lists every problem at once', async () => {
    const res = await create({ name: '', parameters: [{ name: 'x', prior: { mean: 0, std: 0 } }], batch_size: 0 });
    expect(res.json().errors.map((e: { path: string }) => e.path).sort()).toEqual(['/batch_size', '/name', '/parameters/0/prior/std']);
  });
});

describe('GET /v1/studies', () => {
  async function createMany(n: number) {
    for (let i = 0; i < n; i++) expect((await create(studyBody({ name: `s${i}` }))).statusCode).toBe(201);
  }

  it('pages with an opaque token until next_page_token is null', async () => {
    await createMany(5);
    const names: string[] = [];
    let token: string | null = null;
    let pages = 0;
    do {
      const url: string = `/v1/studies?page_size=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`;
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      names.push(...body.studies.map((s: { name: string }) => s.name));
      token = body.next_page_token;
      pages++;
    } while (token);
    expect(names).toEqual(['s0', 's1', 's2', 's3', 's4']);
    expect(pages).toBe(3);
  });

  it('defaults to 50 per page and caps page_size at 1000', async () => {
    await createMany(2);
    const res = await app.inject({ method: 'GET', url: '/v1/studies' });
    expect(res.json()).toMatchObject({ next_page_token: null });
    expect(res.json().studies).toHaveLength(2);
    const big = await app.inject({ method: 'GET', url: '/v1/studies?page_size=1001' });
    expect(big.statusCode).toBe(400);
    expect(big.json().errors).toEqual([{ path: '/page_size', message: expect.stringMatching(/1000/), in: 'querystring' }]);
  });

  it('rejects a tampered or foreign page token with 400 invalid_page_token', async () => {
    await createMany(3);
    const token: string = (await app.inject({ method: 'GET', url: '/v1/studies?page_size=1' })).json().next_page_token;
    const [body, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ v: 1, scope: 'studies:default', after: '0' })).toString('base64url');
    for (const bad of [`${forged}.${sig}`, `${body}.${sig!.slice(0, -2)}AA`, 'garbage', `${body}`]) {
      const res = await app.inject({ method: 'GET', url: `/v1/studies?page_token=${encodeURIComponent(bad)}` });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().code).toBe('invalid_page_token');
    }
  });
});

describe('PATCH /v1/studies/{id}', () => {
  it('renames, replaces metadata and changes state with a reason', async () => {
    const { id } = (await create(studyBody({ metadata: { a: 1 } }))).json();
    const res = await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { name: 'renamed', metadata: { b: 2 }, state: 'PAUSED' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'renamed', metadata: { b: 2 }, state: 'PAUSED', reason: 'paused_by_client' });
    expect(res.json().updated_at > res.json().created_at).toBe(true);
    const back = await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { state: 'ACTIVE' } });
    expect(back.json()).toMatchObject({ state: 'ACTIVE', reason: null });
  });

  it('treats COMPLETED as final: 409 invalid_state_transition', async () => {
    const { id } = (await create(studyBody())).json();
    expect((await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { state: 'COMPLETED' } })).json()).toMatchObject({ state: 'COMPLETED', reason: 'completed_by_client' });
    const res = await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload: { state: 'ACTIVE' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'invalid_state_transition', detail: 'a COMPLETED study cannot become ACTIVE' });
  });

  it('rejects empty patches, unknown fields and unknown states', async () => {
    const { id } = (await create(studyBody())).json();
    for (const payload of [{}, { method: 'bo' }, { state: 'RUNNING' }]) {
      const res = await app.inject({ method: 'PATCH', url: `/v1/studies/${id}`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('validation_failed');
    }
  });

  it('404 study_not_found for an unknown id', async () => {
    const res = await app.inject({ method: 'PATCH', url: '/v1/studies/nope', payload: { name: 'x' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'study_not_found', instance: '/v1/studies/nope' });
  });
});

describe('DELETE /v1/studies/{id}', () => {
  it('204 with no body, then 404 for GET and for a second DELETE', async () => {
    const { id } = (await create(studyBody())).json();
    const del = await app.inject({ method: 'DELETE', url: `/v1/studies/${id}` });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json().code).toBe('study_not_found');
    expect((await app.inject({ method: 'DELETE', url: `/v1/studies/${id}` })).statusCode).toBe(404);
  });
});
