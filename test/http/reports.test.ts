import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { InlineEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { runEngineTask } from '../../src/domain/pool/engine-tasks.js';
import { materialize } from '../../src/domain/studies/transforms.js';
import { resolveOptions, type BaseState } from '../../src/engine/index.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';
import { commit, createStudy, fakeEngineState, spaceOf, stamp, trialAt, type CreatedStudy } from '../helpers/study-data.js';
import { commitWithEvaluations } from '../helpers/evaluations.js';

let app: FastifyInstance;
let storage: Storage;
afterEach(async () => {
  await app?.close();
});

const get = (url: string) => app.inject({ method: 'GET', url });
const I2 = [[1, 0], [0, 1]];

/** COMPLETED trials with these values, completed in the given order (not trial-id order). */
async function withValues(study: CreatedStudy, values: number[], completionOrder: number[] = values.map((_, i) => i)) {
  const times = completionOrder.map(() => stamp());
  const trials = values.map((v, i) => trialAt(study, { x: i * 0.1, lr: 0.01 }, { state: 'COMPLETED', generation: 0, source: 'suggested', value: v, completedAt: times[completionOrder.indexOf(i)]! }));
  await commit(storage, study.id, 0, fakeEngineState(study, 0, [0, 0], I2), trials);
}

describe('GET /history', () => {
  it('minimize: running minimum and regret = best − f*, in completion order', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, known_optimum: 1 }));
    // Trial 2 (value 3) completes first, then 1 (5), 3 (4), 4 (1.5), 5 (2).
    await withValues(study, [5, 3, 4, 1.5, 2], [1, 0, 2, 3, 4]);
    const h = (await get(`/v1/studies/${study.id}/history`)).json();
    expect(h.known_optimum).toBe(1);
    expect(h.evaluations).toEqual([
      { index: 1, trial_id: 2, value: 3, best_so_far: 3, regret: 2 },
      { index: 2, trial_id: 1, value: 5, best_so_far: 3, regret: 2 },
      { index: 3, trial_id: 3, value: 4, best_so_far: 3, regret: 2 },
      { index: 4, trial_id: 4, value: 1.5, best_so_far: 1.5, regret: 0.5 },
      { index: 5, trial_id: 5, value: 2, best_so_far: 1.5, regret: 0.5 },
    ]);
  });

  it('maximize: running maximum and regret = f* − best', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, direction: 'maximize', known_optimum: 10 }));
    await withValues(study, [5, 7, 6, 9.5]);
    const h = (await get(`/v1/studies/${study.id}/history`)).json();
    expect(h.evaluations.map((e: { best_so_far: number }) => e.best_so_far)).toEqual([5, 7, 7, 9.5]);
    expect(h.evaluations.map((e: { regret: number }) => e.regret)).toEqual([5, 3, 3, 0.5]);
  });

  it('regret is null without known_optimum; only COMPLETED trials count', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
    await withValues(study, [2, 1]);
    await commit(storage, study.id, 0, fakeEngineState(study, 0, [0, 0], I2), [trialAt(study, { x: 0, lr: 0.1 }, { state: 'REQUESTED', generation: 0, source: 'suggested' })]);
    const h = (await get(`/v1/studies/${study.id}/history`)).json();
    expect(h.known_optimum).toBeNull();
    expect(h.evaluations).toEqual([
      { index: 1, trial_id: 1, value: 2, best_so_far: 2, regret: null },
      { index: 2, trial_id: 2, value: 1, best_so_far: 1, regret: null },
    ]);
  });

  it('one entry per generation: mean in user units, std in the transformed scale, diagnostics in value units', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, direction: 'maximize' }));
    const [m0, s] = [study.prior.mean, study.prior.std];
    await commit(storage, study.id, 0, fakeEngineState(study, 0, [0, 0], I2));
    await commit(storage, study.id, 1, fakeEngineState(study, 1, [1, -2], [[0.25, 0], [0, 4]], { integral_mean: -3, integral_std: 0.5, n_active: 6 }));
    const h = (await get(`/v1/studies/${study.id}/history`)).json();
    expect(h.evaluations).toEqual([]);
    expect(h.generations).toHaveLength(2);
    expect(h.generations[0]).toEqual({ generation: 0, mean: { x: 1, lr: Math.exp(m0[1]!) }, std: [2, s[1]], integral_mean: null, integral_std: null, n_active: null });
    const g1 = h.generations[1];
    expect(g1.generation).toBe(1);
    expect(g1.mean.x).toBeCloseTo(1 + 2 * 1, 12); // m0 + L0·u, L0 = diag(2, s_lr)
    expect(g1.mean.lr).toBeCloseTo(Math.exp(m0[1]! - 2 * s[1]!), 12);
    expect(g1.std[0]).toBeCloseTo(2 * 0.5, 12);
    expect(g1.std[1]).toBeCloseTo(s[1]! * 2, 12);
    // The engine minimises y = −value for a maximised study: E_ν[value] = +3.
    expect(g1).toMatchObject({ integral_mean: 3, integral_std: 0.5, n_active: 6 });
  });

  it('404 for an unknown study', async () => {
    ({ app, storage } = await makeTestApp());
    expect((await get('/v1/studies/nope/history')).json()).toMatchObject({ status: 404, code: 'study_not_found' });
  });
});

/** A study with a joint prior N(mean, [[4, 1], [1, 1]]) over a linear and a log-scaled parameter. */
const jointStudy = (mean: number[]) => ({
  name: 'joint',
  method: 'random',
  batch_size: 1,
  parameters: [{ name: 'a' }, { name: 'lr', scale: 'log', bounds: [1e-6, 1] }],
  prior: { mean, covariance: [[4, 1], [1, 1]] },
});

describe('GET /distribution', () => {
  it('a log-scaled parameter: mean = exp(mean_transformed); covariance = L0 Σ L0ᵀ in the transformed scale', async () => {
    ({ app, storage } = await makeTestApp());
    // Joint prior with correlation, so L0 is not diagonal: L0 = [[2, 0], [0.5, √(1 − 0.25)]] for Σ0 = [[4, 1], [1, 1]].
    const study = await createStudy(app, jointStudy([0, -5]));
    const u = [0.5, -1];
    const cov = [[1, 0.2], [0.2, 0.5]];
    await commit(storage, study.id, 3, fakeEngineState(study, 3, u, cov));
    const res = await get(`/v1/studies/${study.id}/distribution`);
    expect(res.statusCode).toBe(200);
    const d = res.json();
    const L = [[2, 0], [0.5, Math.sqrt(0.75)]];
    const t = [0 + L[0]![0]! * u[0]!, -5 + L[1]![0]! * u[0]! + L[1]![1]! * u[1]!];
    expect(d.generation).toBe(3);
    expect(d.scale).toEqual(['linear', 'log']);
    expect(d.mean_transformed[0]).toBeCloseTo(t[0]!, 12);
    expect(d.mean_transformed[1]).toBeCloseTo(t[1]!, 12);
    expect(d.mean.a).toBeCloseTo(t[0]!, 12);
    expect(d.mean.lr).toBeCloseTo(Math.exp(t[1]!), 12);
    expect(d.mean.lr).toBeCloseTo(Math.exp(d.mean_transformed[1]), 14);
    // L Σ Lᵀ by hand.
    const LS = L.map((r) => [0, 1].map((j) => r[0]! * cov[0]![j]! + r[1]! * cov[1]![j]!));
    const C = LS.map((r) => L.map((l) => r[0]! * l[0]! + r[1]! * l[1]!));
    for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) expect(d.covariance[i][j]).toBeCloseTo(C[i]![j]!, 12);
    expect(d.covariance[0][1]).toBe(d.covariance[1][0]);
    expect(d.std[1]).toBeCloseTo(Math.sqrt(C[1]![1]!), 12);
  });

  it('before any engine state: the prior', async () => {
    ({ app, storage } = await makeTestApp());
    // A correlated prior with a log-scaled parameter, so the prior covariance is not the identity.
    const created = await createStudy(app, jointStudy([0.5, -5]));
    // The HTTP API stores an engine state with every new study; a study without one (written through
    // the storage contract, which allows it) is where /distribution must fall back to the prior.
    const record = (await storage.getStudy(DEFAULT_TENANT, created.id))!;
    const { generation: _g, updatedAt: _u, trialCounts: _c, ...fields } = record;
    await storage.createStudy({ ...fields, id: 'stateless' });
    expect(await storage.getEngineState('stateless')).toBeNull();
    const res = await get('/v1/studies/stateless/distribution');
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d.generation).toBe(0);
    expect(d.scale).toEqual(['linear', 'log']);
    expect(d.mean_transformed).toEqual([0.5, -5]);
    expect(d.mean).toEqual({ a: 0.5, lr: Math.exp(-5) });
    const prior = [[4, 1], [1, 1]];
    for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) expect(d.covariance[i][j]).toBeCloseTo(prior[i]![j]!, 12);
    expect(d.std[0]).toBeCloseTo(2, 12);
    expect(d.std[1]).toBeCloseTo(1, 12);
    // The same study with its generation-0 engine state reports the same distribution.
    const atCreation = (await get(`/v1/studies/${created.id}/distribution`)).json();
    expect(atCreation.mean_transformed).toEqual(d.mean_transformed);
    for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) expect(atCreation.covariance[i][j]).toBeCloseTo(prior[i]![j]!, 12);
  });

  it('404 for an unknown study', async () => {
    ({ app, storage } = await makeTestApp());
    expect((await get('/v1/studies/nope/distribution')).statusCode).toBe(404);
  });
});

describe('GET /best', () => {
  it('observed: the best COMPLETED trial by direction (first on ties), null before any', async () => {
    ({ app, storage } = await makeTestApp());
    const min = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
    await commit(storage, min.id, 0, fakeEngineState(min, 0, [0, 0], I2));
    expect((await get(`/v1/studies/${min.id}/best`)).json().observed).toBeNull();
    await withValues(min, [4, 2, 2, 9]);
    expect((await get(`/v1/studies/${min.id}/best`)).json().observed).toEqual({ trial_id: 2, parameters: { x: 0.1, lr: 0.01 }, value: 2 });

    const max = await createStudy(app, studyBody({ method: 'random', batch_size: 1, direction: 'maximize' }));
    await withValues(max, [4, 2, 9, 2]);
    expect((await get(`/v1/studies/${max.id}/best`)).json().observed).toMatchObject({ trial_id: 3, value: 9 });
  });

  it('estimated: the distribution mean as a legal point; predictions null for a method without a model', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, parameters: [{ name: 'x', bounds: [-5, 5], prior: { mean: 1, std: 2 } }, { name: 'n', type: 'int', bounds: [1, 100] }] }));
    // x: 1 + 2·10 = 21 is projected onto 5; n: mean of the default prior, 50.5 + 24.75·0.1 = 52.975 → 53.
    await commit(storage, study.id, 2, fakeEngineState(study, 2, [10, 0.1], I2));
    const best = (await get(`/v1/studies/${study.id}/best`)).json();
    expect(best.estimated).toEqual({ parameters: { x: 5, n: 53 }, predicted_value: null, predicted_std: null });
  });

  it('estimated: the engine\'s prediction at the mean, sign-adjusted for maximize', async () => {
    storage = SqliteStorage.open(':memory:');
    const engine = new InlineEngineRunner();
    app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 }, storage, engine, service: { newId: (() => { let i = 0; return () => `s${++i}`; })() } });
    for (const direction of ['minimize', 'maximize'] as const) {
      const study = await createStudy(app, studyBody({ method: 'prob-cmaes', batch_size: 3, direction, seed: 3 }));
      const space = spaceOf(study);
      // One real generation: init, ask 3 points, evaluate value = ‖x‖², tell.
      const init = runEngineTask({ op: 'init', method: 'prob-cmaes', seed: 3, spec: { dim: 2, batchSize: 3, options: resolveOptions('prob-cmaes', 2) } });
      if (init.op !== 'init') throw new Error('init');
      const asked = runEngineTask({ op: 'ask', method: 'prob-cmaes', state: init.state, ctx: { history: [], pending: [] }, count: 3 });
      if (asked.op !== 'ask') throw new Error('ask');
      const sign = direction === 'minimize' ? 1 : -1;
      const evaluated = asked.points.map((u) => materialize(space, u)).map((m) => ({ ...m, value: sign * ((m.parameters.x as number) ** 2 + Math.log(m.parameters.lr as number) ** 2 / 10) }));
      const batch = evaluated.map((e) => ({ x: e.point, y: sign * e.value }));
      const told = runEngineTask({ op: 'tell', method: 'prob-cmaes', state: asked.state, ctx: { batch, history: batch } });
      if (told.op !== 'tell') throw new Error('tell');
      const trials = evaluated.map((e) => ({ state: 'COMPLETED' as const, generation: 0, source: 'suggested' as const, parameters: e.parameters, point: e.point, value: e.value, completedAt: stamp() }));
      // Stored under the engine's own state version (helpers' commit() writes hand-made version-1 states).
      const head = await storage.getEngineState(study.id);
      const res = await commitWithEvaluations(storage, study.id, { expectedRevision: head!.revision, generation: 1, engineState: { version: (told.state as BaseState).version, state: told.state as unknown as Parameters<typeof commit>[3] }, newTrials: trials, now: stamp() });
      expect(res.committed).toBe(true);

      const expected = runEngineTask({ op: 'estimate', method: 'prob-cmaes', state: told.state as BaseState, history: batch });
      if (expected.op !== 'estimate' || expected.estimate.predicted === null) throw new Error('no estimate');
      const best = (await get(`/v1/studies/${study.id}/best`)).json();
      expect(best.estimated.predicted_value, direction).toBeCloseTo(sign * expected.estimate.predicted, 10);
      expect(best.estimated.predicted_std).toBeCloseTo(expected.estimate.predicted_std!, 10);
      expect(best.estimated.parameters).toEqual(materialize(space, told.state.mean).parameters);
    }
    await engine.close();
  });

  it('404 for an unknown study', async () => {
    ({ app, storage } = await makeTestApp());
    expect((await get('/v1/studies/nope/best')).json()).toMatchObject({ status: 404, code: 'study_not_found' });
  });
});
