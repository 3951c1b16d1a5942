/**
 * Data-informed priors through HTTP: `prior.from_points` (weighted mean and OAS-shrunk covariance)
 * and `prior.from_study` (WS-CMA-ES warm start, optionally copying the source's observations), every
 * bad input a 400 naming its JSON pointer, and another tenant's study a 404.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ApiKeyService } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage } from '../../src/storage/index.js';
import { makeTestApp } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

const create = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/studies', payload: body });
const params = [
  { name: 'x', bounds: [-5, 5] },
  { name: 'lr', scale: 'log', bounds: [1e-5, 1] },
];
const paths = (res: { json: () => { errors?: { path: string }[] } }) => (res.json().errors ?? []).map((e) => e.path).sort();

describe('prior.from_points', () => {
  it('fits the weighted mean and a shrunk covariance in the search scale, echoed with its source', async () => {
    const pts = [
      { x: 1, lr: 1e-3 },
      { x: 2, lr: 1e-2 },
      { x: 3, lr: 1e-3 },
      { x: 2.5, lr: 1e-4 },
    ];
    const res = await create({ name: 'pts', parameters: params, prior: { from_points: pts, weights: [1, 2, 1, 1] } });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    // Weighted mean by hand: x (1 + 4 + 3 + 2.5)/5 = 2.1; ln lr (ln1e-3 + 2 ln1e-2 + ln1e-3 + ln1e-4)/5.
    expect(s.prior.mean[0]).toBeCloseTo(2.1, 12);
    expect(s.prior.mean[1]).toBeCloseTo((2 * Math.log(1e-3) + 2 * Math.log(1e-2) + Math.log(1e-4)) / 5, 12);
    expect(s.prior.source).toMatchObject({ from: 'points', points: 4 });
    expect(s.prior.source.shrinkage).toBeGreaterThanOrEqual(0);
    expect(s.prior.source.shrinkage).toBeLessThanOrEqual(1);
    // Shrinkage between S and μI keeps the covariance symmetric positive definite.
    const [[a, b], [c, d]] = s.prior.covariance;
    expect(b).toBe(c);
    expect(a).toBeGreaterThan(0);
    expect(a * d - b * c).toBeGreaterThan(0);
    expect(s.parameters[0].prior.mean).toBeCloseTo(2.1, 12);
    // The study runs from it.
    const sug = await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/suggestions?count=3` });
    expect(sug.statusCode).toBe(200);
  });

  it('two points in ten dimensions still give a positive definite prior (OAS shrinkage)', async () => {
    const ten = Array.from({ length: 10 }, (_, i) => ({ name: `p${i}`, bounds: [0, 10] }));
    const pt = (v: number) => Object.fromEntries(ten.map((p, i) => [p.name, v + (i % 3)]));
    const res = await create({ name: 'ten', parameters: ten, prior: { from_points: [pt(2), pt(4)] } });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    // By hand (prior-fit.ts, OAS): in units of the widths (10) the points are ±0.1 from their mean in
    // every coordinate, so S = 0.01·11ᵀ, tr S = 0.1, tr S² = 0.01, μ = 0.01, n = 2, d = 10:
    // ρ = (0.8·0.01 + 0.01)/((2 + 1 − 0.2)·(0.01 − 0.001)) = 5/7; Ŝ_ii = 0.01, Ŝ_ij = (2/7)·0.01, ×10².
    expect(s.prior.source.shrinkage).toBeCloseTo(5 / 7, 12);
    s.prior.covariance.forEach((row: number[], i: number) => row.forEach((v, j) => expect(v).toBeCloseTo(i === j ? 1 : 2 / 7, 12)));
  });

  it('names every problem by JSON pointer', async () => {
    const res = await create({
      name: 'bad',
      parameters: params,
      prior: { from_points: [{ x: 1, lr: 0.1, y: 3 }, { x: 9, lr: 0.1 }, { lr: 0.1 }, { x: 1, lr: 2 }], weights: [1, 0, -1] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
    expect(paths(res)).toEqual(['/prior/from_points/0/y', '/prior/from_points/1/x', '/prior/from_points/2', '/prior/from_points/3/lr', '/prior/weights', '/prior/weights/1', '/prior/weights/2'].sort());
  });

  it('fewer than 2 points, all-equal points, a non-number, a non-finite value and a mixed form are 400s', async () => {
    expect(paths(await create({ name: 'one', parameters: params, prior: { from_points: [{ x: 1, lr: 0.1 }] } }))).toEqual(['/prior/from_points']);
    expect(paths(await create({ name: 'same', parameters: params, prior: { from_points: [{ x: 1, lr: 0.1 }, { x: 1, lr: 0.1 }] } }))).toEqual(['/prior/from_points']);
    expect(paths(await create({ name: 'str', parameters: params, prior: { from_points: [{ x: 'a', lr: 0.1 }, { x: 1, lr: 0.1 }] } }))).toEqual(['/prior/from_points/0/x']);
    const inf = await app.inject({ method: 'POST', url: '/v1/studies', headers: { 'content-type': 'application/json' }, payload: '{"name":"inf","parameters":[{"name":"x","bounds":[-5,5]}],"prior":{"from_points":[{"x":1e999},{"x":1}]}}' });
    expect(inf.statusCode).toBe(400);
    expect(paths(inf)).toEqual(['/prior/from_points/0/x']);
    expect(paths(await create({ name: 'mix', parameters: params, prior: { mean: [0, -5], covariance: [[1, 0], [0, 1]], from_points: [{ x: 1, lr: 0.1 }] } }))).toEqual(['/prior']);
    const both = await create({ name: 'both', parameters: [{ name: 'x', bounds: [-5, 5], prior: { mean: 0, std: 1 } }], prior: { from_points: [{ x: 1 }, { x: 2 }] } });
    expect(paths(both)).toEqual(['/parameters/0/prior']);
  });
});

/** A finished source study: Branin-like values reported for handed-out points. */
async function sourceStudy(a: FastifyInstance, headers: Record<string, string> = {}, body: Record<string, unknown> = {}): Promise<string> {
  const res = await a.inject({ method: 'POST', url: '/v1/studies', headers, payload: { name: 'src', parameters: params, method: 'random', batch_size: 4, seed: 3, ...body } });
  expect(res.statusCode).toBe(201);
  const id = res.json().id as string;
  for (let g = 0; g < 3; g++) {
    const sug = (await a.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=4`, headers })).json();
    const observations = sug.trials.map((t: { trial_id: number; parameters: { x: number; lr: number } }) => ({ trial_id: t.trial_id, value: (t.parameters.x - 2) ** 2 + (Math.log10(t.parameters.lr) + 3) ** 2 }));
    expect((await a.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, headers, payload: { observations } })).statusCode).toBe(200);
  }
  return id;
}

describe('prior.from_study', () => {
  it('fits the WS-CMA-ES distribution to the best trials, records the source and copies observations when asked', async () => {
    const src = await sourceStudy(app);
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${src}/trials?page_size=100` })).json().trials as { state: string; value: number; parameters: { x: number; lr: number } }[];
    const done = trials.filter((t) => t.state === 'COMPLETED').sort((p, q) => p.value - q.value);
    expect(done).toHaveLength(12);
    const res = await create({ name: 'warm', parameters: params, prior: { from_study: { study_id: src, top_fraction: 0.25, include_observations: true } } });
    expect(res.statusCode).toBe(201);
    const s = res.json();
    // ⌈0.25·12⌉ = 3 best; m* = their mean in the search scale; Σ* = α²·w² + their covariance (1/k).
    const top = done.slice(0, 3);
    const mx = top.reduce((acc, t) => acc + t.parameters.x, 0) / 3;
    const vx = top.reduce((acc, t) => acc + (t.parameters.x - mx) ** 2, 0) / 3;
    expect(s.prior.mean[0]).toBeCloseTo(mx, 10);
    expect(s.prior.covariance[0][0]).toBeCloseTo(0.1 ** 2 * 10 ** 2 + vx, 10);
    expect(s.prior.source).toEqual({ from: 'study', study_id: src, top_fraction: 0.25, alpha: 0.1, points: 3, include_observations: true, observations_copied: 12 });
    expect(s.trial_counts.COMPLETED).toBe(12);
    const copied = (await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/trials?page_size=100` })).json().trials;
    expect(copied.every((t: { source: string; state: string }) => t.source === 'external' && t.state === 'COMPLETED')).toBe(true);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/best` })).json().observed.value).toBe(done[0]!.value);
    // The export carries the source, and the document imports again.
    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/export` })).json();
    expect(doc.study.prior.source.study_id).toBe(src);
    expect((await app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc })).statusCode).toBe(201);
    // The warm-started study suggests (the copied data joins its model).
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/suggestions?count=3` })).statusCode).toBe(200);
  });

  it('without include_observations the new study starts empty', async () => {
    const src = await sourceStudy(app);
    const s = (await create({ name: 'warm', parameters: params, prior: { from_study: { study_id: src } } })).json();
    expect(s.trial_counts.COMPLETED).toBe(0);
    expect(s.prior.source).toMatchObject({ from: 'study', top_fraction: 0.1, points: 2, observations_copied: 0 });
  });

  it('a maximising source: the best trials are those of the largest values', async () => {
    const src = await sourceStudy(app, {}, { direction: 'maximize' });
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${src}/trials?page_size=100` })).json().trials as { state: string; value: number; parameters: { x: number } }[];
    const top = trials.filter((t) => t.state === 'COMPLETED').sort((p, q) => q.value - p.value).slice(0, 3);
    const s = (await create({ name: 'warm', direction: 'maximize', parameters: params, prior: { from_study: { study_id: src, top_fraction: 0.25 } } })).json();
    expect(s.prior.mean[0]).toBeCloseTo(top.reduce((acc, t) => acc + t.parameters.x, 0) / 3, 10);
  });

  it('a mismatch of names, scales or direction, or a source without results, is a 400 naming it', async () => {
    const src = await sourceStudy(app);
    const res = await create({ name: 'bad', direction: 'maximize', parameters: [{ name: 'x', scale: 'log', bounds: [1, 5] }, { name: 'z', bounds: [0, 1] }], prior: { from_study: { study_id: src } } });
    expect(res.statusCode).toBe(400);
    expect(paths(res)).toEqual(['/direction', '/parameters', '/parameters/0/scale', '/parameters/1/name'].sort());
    const empty = (await create({ name: 'empty', parameters: params })).json().id;
    expect(paths(await create({ name: 'e', parameters: params, prior: { from_study: { study_id: empty } } }))).toEqual(['/prior/from_study/study_id']);
    expect(paths(await create({ name: 'g', parameters: params, prior: { from_study: { study_id: src, top_fraction: 0 } } }))).toEqual(['/prior/from_study/top_fraction']);
  });

  it('a missing study, or another tenant\'s, is a 404 and creates nothing', async () => {
    const storage = SqliteStorage.open(':memory:');
    const keyed = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 6000 }, storage, auth: { envKeys: [], allowOpen: true } });
    try {
      const keys = new ApiKeyService({ storage });
      const a = { authorization: `Bearer ${(await keys.create('tenant-a')).key}` };
      const b = { authorization: `Bearer ${(await keys.create('tenant-b')).key}` };
      const src = await sourceStudy(keyed, a);
      for (const id of [src, 'no-such-study']) {
        const res = await keyed.inject({ method: 'POST', url: '/v1/studies', headers: b, payload: { name: 'steal', parameters: params, prior: { from_study: { study_id: id } } } });
        expect(res.statusCode).toBe(404);
        expect(res.json().code).toBe('study_not_found');
      }
      expect((await keyed.inject({ method: 'GET', url: '/v1/studies', headers: b })).json().studies).toEqual([]);
      expect((await keyed.inject({ method: 'POST', url: '/v1/studies', headers: a, payload: { name: 'mine', parameters: params, prior: { from_study: { study_id: src } } } })).statusCode).toBe(201);
    } finally {
      await keyed.close();
    }
  });
});
