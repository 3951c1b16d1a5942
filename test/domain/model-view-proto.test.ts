/**
 * A study stored before reserved parameter names were refused may have a parameter named
 * `__proto__` (a security review). Its model views answer 200 with the parameter carried end to end
 * (as x, as y, or held fixed; a categorical one named in the grid's `fixed`) or a 4xx, never a 5xx. The study is written straight through the
 * storage (importStudy of a renamed export), which the creation's validation does not see.
 */
import { importedEvaluations } from '../../src/domain/results/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { ModelViews } from '../../src/domain/studies/model-views.js';
import { createEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let id: string;
let catId: string;

/** The study, exported, its parameter zz renamed __proto__, imported under `newId`. */
async function renamed(studyId: string, newId: string) {
  const exported = await t.storage.exportStudy(DEFAULT_TENANT, studyId);
  expect(exported).not.toBeNull();
  // JSON.parse makes "__proto__" an own property, as the storage's rows do when read back.
  const old = JSON.parse(JSON.stringify(exported).replaceAll('"zz"', '"__proto__"')) as NonNullable<typeof exported>;
  expect(Object.hasOwn(old.trials[0]!.parameters, '__proto__')).toBe(true);
  await t.storage.importStudy({ ...old.study, id: newId }, old.trials.map(({ studyId: _, ...tr }) => tr), old.engineStates.map(({ studyId: _, ...s }) => s), [], importedEvaluations(old.study, old.trials));
  return newId;
}

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(t.app, method, url, payload);

beforeAll(async () => {
  t = await makeTestApp();
  const study = await call('POST', '/v1/studies', {
    name: 'old-proto',
    method: 'cmaes',
    batch_size: 4,
    seed: 3,
    parameters: [
      { name: 'x', type: 'float', bounds: [-3, 3] },
      { name: 'zz', type: 'float', bounds: [-3, 3] },
      { name: 'w', type: 'float', bounds: [-3, 3] },
    ],
  });
  for (let g = 0; g < 3; g++) {
    const s = await call('GET', `/v1/studies/${study.id}/suggestions?count=4&client_id=w`);
    await call('POST', `/v1/studies/${study.id}/observations`, {
      observations: s.trials.map((tr: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: tr.trial_id, value: (tr.parameters.x! - 1) ** 2 + tr.parameters.zz! ** 2 + 0.1 * tr.parameters.w! })),
    });
  }
  id = await renamed(study.id, 'study-old-proto');
  // A categorical parameter of that name (prob-cmaes: the method's GP on φ).
  const cat = await call('POST', '/v1/studies', {
    name: 'old-proto-categorical',
    method: 'prob-cmaes',
    batch_size: 4,
    seed: 3,
    parameters: [
      { name: 'x', type: 'float', bounds: [-3, 3] },
      { name: 'zz', type: 'categorical', choices: ['a', 'b'] },
      { name: 'w', type: 'float', bounds: [-3, 3] },
    ],
  });
  for (let g = 0; g < 3; g++) {
    const s = await call('GET', `/v1/studies/${cat.id}/suggestions?count=4&client_id=w`);
    await call('POST', `/v1/studies/${cat.id}/observations`, {
      observations: s.trials.map((tr: { trial_id: number; parameters: Record<string, number | string> }) => ({ trial_id: tr.trial_id, value: ((tr.parameters.x as number) - 1) ** 2 + (tr.parameters.zz === 'b' ? 2 : 0) })),
    });
  }
  catId = await renamed(cat.id, 'study-old-proto-categorical');
}, 120_000);
afterAll(async () => {
  await t.app.close();
  await t.storage.close();
});

describe('a stored study with a parameter named __proto__', () => {
  it('GET …/model/grid?x=__proto__ answers the grid over it', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=__proto__&y=x&n=5` });
    expect(res.statusCode, res.body).toBe(200);
    const g = res.json();
    expect(g.x.name).toBe('__proto__');
    expect(g.x.values).toHaveLength(5);
    for (const p of g.points) expect(Number.isFinite(p.x), JSON.stringify(p)).toBe(true);
    for (const row of [...g.mean, ...g.std]) for (const v of row) expect(Number.isFinite(v)).toBe(true);
    expect(Object.keys(g.fixed)).toEqual(['w']);
  });

  it('as y, and held fixed while two others vary: its value is in `fixed`', async () => {
    const asY = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x&y=__proto__&n=5` });
    expect(asY.statusCode, asY.body).toBe(200);
    expect(asY.json().y.name).toBe('__proto__');
    const held = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x&y=w&n=5` });
    expect(held.statusCode, held.body).toBe(200);
    for (const row of [...held.json().mean, ...held.json().std]) for (const v of row) expect(Number.isFinite(v)).toBe(true);
    // The view holds it at the distribution's mean, as an own key of a prototype-less `fixed`.
    const views = new ModelViews({ storage: t.storage, engine: createEngineRunner(0) });
    const g = await views.grid(DEFAULT_TENANT, id, { x: 'x', y: 'w', n: 5 });
    expect(Object.keys(g.fixed)).toEqual(['__proto__']);
    expect(Number.isFinite(g.fixed['__proto__'])).toBe(true);
  });

  it('importance names it', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/model/importance` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().parameters.map((p: { name: string }) => p.name)).toEqual(['x', '__proto__', 'w']);
  });

  it('a categorical parameter of that name: the grid at a choice `fixed` names, and importance scores it', async () => {
    const at = async (choice: string) => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${catId}/model/grid?x=x&y=w&n=5&fixed=${encodeURIComponent(JSON.stringify({ ['__proto__']: choice }))}` });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const [a, b] = [await at('a'), await at('b')];
    expect(a.source).toBe('method');
    expect(b.mean).not.toEqual(a.mean);
    // The view's `fixed` holds it as an own key (read from the domain, as above).
    const views = new ModelViews({ storage: t.storage, engine: createEngineRunner(0) });
    const g = await views.grid(DEFAULT_TENANT, catId, { x: 'x', y: 'w', n: 5, fixed: '{"__proto__": "b"}' });
    expect(Object.keys(g.fixed)).toEqual(['__proto__']);
    expect(g.fixed['__proto__']).toBe('b');
    expect(g.mean).toEqual(b.mean);
    const bad = await t.app.inject({ method: 'GET', url: `/v1/studies/${catId}/model/grid?x=x&y=w&n=5&fixed=${encodeURIComponent('{"__proto__": "c"}')}` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors[0].path).toBe('/fixed/__proto__');
    const imp = await t.app.inject({ method: 'GET', url: `/v1/studies/${catId}/model/importance` });
    expect(imp.statusCode, imp.body).toBe(200);
    expect(imp.json().parameters.map((p: { name: string; type: string }) => [p.name, p.type])).toEqual([['x', 'numeric'], ['__proto__', 'categorical'], ['w', 'numeric']]);
  });
});
