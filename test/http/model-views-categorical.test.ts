/**
 * The model views on a mixed space (src/domain/studies/model-views.ts): the GP sees the choices
 * (φ = [u, one-hot(c)]), importance scores every parameter whatever its type, and model/grid's
 * `fixed` conditions the grid on categorical choices, each choice its own cached answer.
 *
 * Evidence: synthetic objectives where the answer is known by construction: a study whose value
 * depends on the choice only (the categorical must rank first, and the grid at each choice must
 * sit at that choice's value), and an SVC-like one where gamma matters under the rbf kernel only
 * (the kernel must not rank below gamma).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { ModelViews } from '../../src/domain/index.js';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
const ids: Record<string, string> = {};

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(t.app, method, url, payload);

type Params = Record<string, number | string | boolean>;

async function drive(body: Record<string, unknown>, f: (p: Params) => number, generations: number, batch = 6) {
  const study = await call('POST', '/v1/studies', { batch_size: batch, seed: 11, ...body });
  for (let g = 0; g < generations; g++) {
    const s = await call('GET', `/v1/studies/${study.id}/suggestions?count=${batch}&client_id=w`);
    await call('POST', `/v1/studies/${study.id}/observations`, { observations: s.trials.map((tr: { trial_id: number; parameters: Params }) => ({ trial_id: tr.trial_id, value: f(tr.parameters) })) });
  }
  return study.id as string;
}

// Only the choice matters: a → 0, b → 1, c → 2; x1 and x2 change nothing.
const LEVEL: Record<string, number> = { a: 0, b: 1, c: 2 };
const choiceOnly = {
  name: 'choice-only',
  parameters: [
    { name: 'x1', bounds: [-3, 3] },
    { name: 'opt', type: 'categorical', choices: ['a', 'b', 'c'] },
    { name: 'x2', bounds: [-3, 3] },
  ],
};
const fChoice = (p: Params) => LEVEL[p.opt as string]!;

// An SVC's validation error: gamma matters for the rbf kernel only; C a little for every kernel.
const svc = {
  name: 'svc',
  parameters: [
    { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf', 'poly'] },
    { name: 'C', scale: 'log', bounds: [1e-3, 1e3] },
    { name: 'gamma', scale: 'log', bounds: [1e-4, 10] },
  ],
};
const fSvc = (p: Params) => {
  const lc = Math.log10(p.C as number), lg = Math.log10(p.gamma as number);
  const c = 0.01 * (lc - 1) ** 2;
  if (p.kernel === 'rbf') return 0.05 + c + 0.08 * (lg + 1.5) ** 2;
  return (p.kernel === 'linear' ? 0.3 : 0.4) + c;
};

beforeAll(async () => {
  t = await makeTestApp();
  ids.random = await drive({ ...choiceOnly, method: 'random' }, fChoice, 6);
  ids.svcRandom = await drive({ ...svc, method: 'random' }, fSvc, 8);
  ids.probnes = await drive({ ...choiceOnly, method: 'prob-cmaes' }, fChoice, 4);
  ids.bo = await drive({ ...choiceOnly, method: 'bo', options: { candidates: 100, mc_samples: 16 } }, fChoice, 3);
  ids.svcProbnes = await drive({ ...svc, method: 'prob-cmaes' }, fSvc, 5);
}, 240_000);
afterAll(async () => {
  await t.app.close();
  await t.storage.close();
});

interface Importance { source: string; parameters: { name: string; type: string; scale: string | null; lengthscale: number | null; relevance: number; relevance_interval: [number, number] | null }[] }
const ranked = (v: Importance) => [...v.parameters].sort((a, b) => b.relevance - a.relevance).map((p) => p.name);

describe('importance on a mixed space', () => {
  it.each([
    ['random', 'fitted'],
    ['probnes', 'method'],
    ['bo', 'method'],
  ])('%s: every parameter is scored, in the study\'s order, and the only one that matters (categorical) ranks first', async (key, source) => {
    const v: Importance = await call('GET', `/v1/studies/${ids[key]}/model/importance`);
    expect(v.source).toBe(source);
    if (process.env.SHOW) console.log(key, JSON.stringify(v.parameters));
    expect(v.parameters.map((p) => [p.name, p.type])).toEqual([['x1', 'numeric'], ['opt', 'categorical'], ['x2', 'numeric']]);
    const opt = v.parameters[1]!;
    expect(opt.scale).toBeNull();
    expect(opt.lengthscale).toBeNull();
    expect(ranked(v)[0]).toBe('opt');
    if (opt.relevance_interval) {
      expect(opt.relevance_interval[0]).toBeLessThan(opt.relevance);
      expect(opt.relevance_interval[1]).toBeGreaterThan(opt.relevance);
    }
  });

  it.each(['svcRandom', 'svcProbnes'])('%s: gamma matters only under rbf; the kernel is not ranked below it', async (key) => {
    const v: Importance = await call('GET', `/v1/studies/${ids[key]}/model/importance`);
    if (process.env.SHOW) console.log(key, JSON.stringify(v.parameters));
    const r = Object.fromEntries(v.parameters.map((p) => [p.name, p.relevance]));
    expect(r.kernel).toBeGreaterThanOrEqual(r.gamma!);
    expect(v.parameters.map((p) => p.name)).toEqual(['kernel', 'C', 'gamma']);
  });
});

describe('model/grid at a choice', () => {
  it.each(['random', 'probnes', 'bo'])('%s: the grid at each choice is the model at that choice (a, b, c: 0, 1, 2), and `fixed` says which', async (key) => {
    const at = async (choice: string) => call('GET', `/v1/studies/${ids[key]}/model/grid?x=x1&y=x2&n=6&fixed=${encodeURIComponent(JSON.stringify({ opt: choice }))}`);
    const means: Record<string, number> = {};
    for (const c of ['a', 'b', 'c']) {
      const g = await at(c);
      expect(g.fixed).toEqual({ opt: c });
      const flat = g.mean.flat() as number[];
      means[c] = flat.reduce((s, v) => s + v, 0) / flat.length;
      // The points on the slice are the trials with that choice.
      for (const p of g.points) expect(p.same_choices).toBe(p.value === LEVEL[c]);
    }
    // Ordered as the objective is, and apart by most of a level.
    expect(means.b! - means.a!).toBeGreaterThan(0.5);
    expect(means.c! - means.b!).toBeGreaterThan(0.5);
  });

  it('without `fixed`, each categorical parameter is at its most probable choice, and the answer says which', async () => {
    const d = await call('GET', `/v1/studies/${ids.probnes}/distribution`);
    const probs = d.probabilities.opt as number[];
    const mode = ['a', 'b', 'c'][probs.indexOf(Math.max(...probs))];
    const g = await call('GET', `/v1/studies/${ids.probnes}/model/grid?x=x1&y=x2&n=4`);
    expect(g.fixed.opt).toBe(mode);
    const same = await call('GET', `/v1/studies/${ids.probnes}/model/grid?x=x1&y=x2&n=4&fixed=${encodeURIComponent(JSON.stringify({ opt: mode }))}`);
    expect(same.mean).toEqual(g.mean);
  });

  it('bad `fixed` is a 400 at /fixed or /fixed/<name>, never a 500', async () => {
    const bad = async (fixed: string, id = ids.svcRandom, axes = 'x=C&y=gamma') => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?${axes}&n=4&fixed=${encodeURIComponent(fixed)}` });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/problem\+json/);
      return res.json().errors as { path: string; message: string }[];
    };
    expect((await bad('{"kernel": "sigmoid"}'))[0]).toMatchObject({ path: '/fixed/kernel', message: expect.stringMatching(/not a choice.*"rbf"/) });
    expect((await bad('{"nope": "rbf"}'))[0]).toMatchObject({ path: '/fixed/nope', message: expect.stringMatching(/no categorical parameter "nope"/) });
    expect((await bad('{"C": 1}'))[0]).toMatchObject({ path: '/fixed/C', message: expect.stringMatching(/numeric/) });
    expect((await bad('{"kernel": ["rbf"]}'))[0]!.path).toBe('/fixed/kernel');
    expect((await bad('{"__proto__": "rbf", "a/b": 1}')).map((e) => e.path)).toEqual(['/fixed/__proto__', '/fixed/a~1b']);
    for (const shape of ['rbf', '["rbf"]', 'null', '3', '{']) expect((await bad(shape))[0]!.path).toBe('/fixed');
    // Matched by JSON type: the string "1" is not the choice 1.
    const typed = await drive({ name: 'typed', method: 'random', parameters: [{ name: 'x1', bounds: [-1, 1] }, { name: 'x2', bounds: [-1, 1] }, { name: 'layers', type: 'categorical', choices: [1, 2, 4] }] }, (p) => (p.layers as number) + (p.x1 as number), 2, 4);
    expect((await bad('{"layers": "2"}', typed, 'x=x1&y=x2'))[0]!.path).toBe('/fixed/layers');
    const ok = await call('GET', `/v1/studies/${typed}/model/grid?x=x1&y=x2&n=4&fixed=${encodeURIComponent('{"layers": 2}')}`);
    expect(ok.fixed.layers).toBe(2);
  });
});

describe('the cache keys on the choice', () => {
  /** The inline runner, counting model-view calls. */
  function countingRunner() {
    const inner = createEngineRunner(0);
    const counter = { calls: 0 };
    const engine: EngineRunner = {
      async run(task, caller) {
        if (task.op === 'model-view') counter.calls++;
        return inner.run(task, caller);
      },
      close: () => inner.close(),
    };
    return { engine, counter };
  }

  it('two choices never share an answer; the same choice, asked for or resolved by default, is one', async () => {
    const { engine, counter } = countingRunner();
    const views = new ModelViews({ storage: t.storage, engine });
    const id = ids.random!;
    const a = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 5, fixed: '{"opt": "a"}' });
    const calls = counter.calls;
    const c = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 5, fixed: '{"opt": "c"}' });
    expect(counter.calls).toBe(calls + 1);
    expect(c.fixed.opt).toBe('c');
    expect(c.mean).not.toEqual(a.mean);
    // Again: from the cache, and still each its own.
    expect(await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 5, fixed: '{"opt": "a"}' })).toEqual(a);
    expect(await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 5, fixed: '{"opt": "c"}' })).toEqual(c);
    expect(counter.calls).toBe(calls + 1);
    // random's distribution over the choices is its uniform prior: the most probable is the first, a.
    const byDefault = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 5 });
    expect(byDefault).toEqual(a);
    expect(counter.calls).toBe(calls + 1);
  });
});

describe('a wide one-hot encoding is bounded', () => {
  it('100 choices: the fitted GP learns from fewer points (n²·D as for 100 numeric parameters), and the Laplace intervals are skipped', async () => {
    const choices = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const study = await call('POST', '/v1/studies', { name: 'wide', method: 'random', seed: 3, parameters: [{ name: 'x1', bounds: [-1, 1] }, { name: 'x2', bounds: [-1, 1] }, { name: 'opt', type: 'categorical', choices }] });
    const observations = Array.from({ length: 320 }, (_, i) => ({ parameters: { x1: Math.sin(i), x2: Math.cos(3 * i), opt: choices[i % 100]! }, value: (i % 100) / 100 + 0.1 * Math.sin(i) }));
    await call('POST', `/v1/studies/${study.id}/observations`, { observations });
    const v = await call('GET', `/v1/studies/${study.id}/model/importance`);
    // D = 2 + 100 inputs: ⌊300·√(100/102)⌋ = 297 points, and no intervals (more than 100 inputs).
    expect(v.n_points).toBe(297);
    expect(v.uncertainty).toBeNull();
    expect(v.parameters.every((p: { relevance_interval: unknown }) => p.relevance_interval === null)).toBe(true);
    expect(v.parameters.map((p: { name: string }) => p.name)).toEqual(['x1', 'x2', 'opt']);
  }, 60_000);
});
