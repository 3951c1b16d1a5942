/**
 * GET /v1/studies/{id}/model/grid and /model/importance over app.inject: the method's own GP
 * (prob-cmaes, bo) or one fitted for the view (cmaes), every generation, the distribution's
 * ellipses against /distribution, and bad input answered with problem+json naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';
import { buildApp } from '../../src/app.js';

// Steep in x1, nearly flat in x2: importance must rank x1 first.
const f = (p: { x1: number; x2: number }) => 50 * (p.x1 - 1) ** 2 + 0.01 * p.x2;

let t: TestApp;
const ids: Record<string, string> = {};

const call = injectOk;

async function drive(app: FastifyInstance, method: string, generations: number, extra: Record<string, unknown> = {}) {
  const study = await call(app, 'POST', '/v1/studies', {
    name: `views-${method}`,
    method,
    batch_size: 4,
    seed: 5,
    parameters: [
      { name: 'x1', type: 'float', bounds: [-3, 3], prior: { mean: 0, std: 1 } },
      { name: 'x2', type: 'float', scale: 'log', bounds: [0.01, 100], prior: { mean: 0, std: 1.5 } },
    ],
    ...extra,
  });
  for (let g = 0; g < generations; g++) {
    const s = await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=4&client_id=w`);
    await call(app, 'POST', `/v1/studies/${study.id}/observations`, { observations: s.trials.map((tr: { trial_id: number; parameters: { x1: number; x2: number } }) => ({ trial_id: tr.trial_id, value: f(tr.parameters) })) });
  }
  return study.id as string;
}

beforeAll(async () => {
  t = await makeTestApp();
  ids['prob-cmaes'] = await drive(t.app, 'prob-cmaes', 4, { options: { candidates: 64 } });
  ids.cmaes = await drive(t.app, 'cmaes', 4);
  ids.bo = await drive(t.app, 'bo', 3, { options: { candidates: 100, mc_samples: 16 } });
  ids.random = await drive(t.app, 'random', 0);
  // A categorical parameter (CatCMA, no model of its own): the view's GP is fitted on φ = [u, one-hot(c)].
  const cat = await call(t.app, 'POST', '/v1/studies', {
    name: 'views-categorical',
    method: 'cmaes',
    batch_size: 4,
    seed: 5,
    parameters: [
      { name: 'x1', type: 'float', bounds: [-3, 3], prior: { mean: 0, std: 1 } },
      { name: 'x2', type: 'float', scale: 'log', bounds: [0.01, 100], prior: { mean: 0, std: 1.5 } },
      { name: 'opt', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'] },
    ],
  });
  for (let g = 0; g < 4; g++) {
    const s = await call(t.app, 'GET', `/v1/studies/${cat.id}/suggestions?count=4&client_id=w`);
    await call(t.app, 'POST', `/v1/studies/${cat.id}/observations`, { observations: s.trials.map((tr: { trial_id: number; parameters: { x1: number; x2: number; opt: string } }) => ({ trial_id: tr.trial_id, value: f(tr.parameters) + (tr.parameters.opt === 'sgd' ? 1 : 0) })) });
  }
  ids.categorical = cat.id;
}, 120_000);
afterAll(async () => {
  await t.app.close();
  await t.storage.close();
});

describe('GET /model/grid', () => {
  it.each([['prob-cmaes', 'method'], ['bo', 'method'], ['cmaes', 'fitted']])('%s: an n×n grid of finite predictions (source %s), the evaluated points and the distribution\'s ellipses', async (method, source) => {
    const id = ids[method]!;
    const g = await call(t.app, 'GET', `/v1/studies/${id}/model/grid?x=x1&y=x2&n=12`);
    expect(g.source).toBe(source);
    expect(g.x.values).toHaveLength(12);
    expect(g.y.values).toHaveLength(12);
    expect(g.mean).toHaveLength(12);
    for (const row of [...g.mean, ...g.std]) {
      expect(row).toHaveLength(12);
      expect(row.every(Number.isFinite)).toBe(true);
    }
    expect(g.std.flat().every((v: number) => v >= 0)).toBe(true);
    // The log parameter's grid is evenly spaced in ln x.
    const lx = g.y.values.map(Math.log);
    expect(lx[2] - lx[1]).toBeCloseTo(lx[1] - lx[0], 9);
    const history = await call(t.app, 'GET', `/v1/studies/${id}/history`);
    expect(g.points).toHaveLength(history.evaluations.length);
    expect(g.points.every((p: { in_model: boolean }) => p.in_model)).toBe(true);
    // Ellipses: the k-σ ellipse of a Gaussian reaches exactly k standard deviations along each axis
    // (in the parameter's scale; ln for x2), with the std read independently from /distribution.
    const d = await call(t.app, 'GET', `/v1/studies/${id}/distribution`);
    for (const e of g.distribution.ellipses) {
      const xs = e.points.map((p: number[]) => p[0]);
      const ys = e.points.map((p: number[]) => Math.log(p[1]));
      expect(Math.max(...xs) - d.mean_transformed[0]).toBeCloseTo(e.sigma * d.std[0], 2);
      expect(d.mean_transformed[1] - Math.min(...ys)).toBeCloseTo(e.sigma * d.std[1], 2);
    }
    expect(g.fixed).toEqual({});
  });

  it('the model of every generation: earlier ones know fewer points', async () => {
    const id = ids['prob-cmaes']!;
    const late = await call(t.app, 'GET', `/v1/studies/${id}/model/grid?x=x1&y=x2&n=5`);
    const early = await call(t.app, 'GET', `/v1/studies/${id}/model/grid?x=x1&y=x2&n=5&generation=1`);
    expect(early.generation).toBe(1);
    expect(late.generation).toBeGreaterThan(1);
    expect(early.n_points).toBeLessThan(late.n_points);
    expect(early.mean).not.toEqual(late.mean);
  });

  it('409 model_unavailable before two evaluations', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.random}/model/grid?x=x1&y=x2` });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json().code).toBe('model_unavailable');
  });

  it.each([
    ['x=nope&y=x2', '/x', /nope/],
    ['x=x1&y=x1', '/y', /other than x/],
    ['x=x1&y=x2&n=61', '/n', /60|less than/i],
    ['x=x1&y=x2&n=1', '/n', /2|greater/i],
    ['x=x1&y=x2&n=abc', '/n', /number|nan/i],
    ['x=x1&y=x2&generation=99', '/generation', /no generation 99/],
    ['x=x1&y=x2&generation=-1', '/generation', /0|greater/i],
    ['y=x2', '/x', /x|required|expected/i],
    ['x=x1&y=x2&colour=red', '/colour', /unknown/],
  ])('400 for %s, naming %s', async (query, path, message) => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.cmaes}/model/grid?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const body = res.json();
    expect(body.code).toBe('validation_failed');
    const err = body.errors.find((e: { path: string }) => e.path === path);
    expect(err, JSON.stringify(body.errors)).toBeDefined();
    expect(err.message).toMatch(message);
  });

  it('404 for an unknown study', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/studies/nope/model/grid?x=x1&y=x2' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('study_not_found');
  });

  it('gives the same answer from the worker pool as inline', async () => {
    const runner = createEngineRunner(1);
    const app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 60_000 }, storage: t.storage, engine: runner });
    try {
      const url = `/v1/studies/${ids['prob-cmaes']}/model/grid?x=x1&y=x2&n=6`;
      const [a, b] = await Promise.all([call(app, 'GET', url), call(t.app, 'GET', url)]);
      expect(a.mean).toEqual(b.mean);
    } finally {
      await app.close();
      await runner.close();
    }
  }, 60_000);
});

describe('a study with a categorical parameter', () => {
  it('grid over the numeric parameters, the categorical one at its most probable choice or the one asked for; importance of every parameter', async () => {
    const g = await call(t.app, 'GET', `/v1/studies/${ids.categorical}/model/grid?x=x1&y=x2&n=8`);
    expect(g.source).toBe('fitted');
    expect(['adam', 'sgd', 'rmsprop']).toContain(g.fixed.opt);
    expect(g.mean.flat().every(Number.isFinite)).toBe(true);
    // sgd adds 1 to the objective everywhere: the model at sgd lies above the model at adam.
    const at = (opt: string) => call(t.app, 'GET', `/v1/studies/${ids.categorical}/model/grid?x=x1&y=x2&n=8&fixed=${encodeURIComponent(JSON.stringify({ opt }))}`);
    const [adam, sgd] = [await at('adam'), await at('sgd')];
    const avg = (m: number[][]) => m.flat().reduce((a, b) => a + b, 0) / m.flat().length;
    expect(avg(sgd.mean) - avg(adam.mean)).toBeGreaterThan(0.3);
    const v = await call(t.app, 'GET', `/v1/studies/${ids.categorical}/model/importance`);
    expect(v.parameters.map((p: { name: string; type: string }) => [p.name, p.type])).toEqual([['x1', 'numeric'], ['x2', 'numeric'], ['opt', 'categorical']]);
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.categorical}/model/grid?x=opt&y=x2` });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0]).toMatchObject({ path: '/x' });
    expect(res.json().errors[0].message).toMatch(/categorical/);
  });
});

describe('GET /model/importance', () => {
  it.each(['prob-cmaes', 'bo', 'cmaes'])('%s: x1 (steep) is more relevant than x2 (nearly flat), with intervals around the estimates', async (method) => {
    const v = await call(t.app, 'GET', `/v1/studies/${ids[method]}/model/importance`);
    const [x1, x2] = v.parameters;
    expect(x1.name).toBe('x1');
    expect(x2.scale).toBe('log');
    expect(x1.relevance).toBeGreaterThan(x2.relevance);
    for (const p of v.parameters) {
      expect(p.lengthscale).toBeGreaterThan(0);
      if (p.lengthscale_interval) {
        expect(p.lengthscale_interval[0]).toBeLessThan(p.lengthscale);
        expect(p.lengthscale_interval[1]).toBeGreaterThan(p.lengthscale);
      }
    }
    expect(v.uncertainty === null || ['joint', 'conditional'].includes(v.uncertainty)).toBe(true);
  });

  it('400 naming generation when it does not exist', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.cmaes}/model/importance?generation=1000` });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].path).toBe('/generation');
  });
});
