/**
 * Engine time over HTTP: a tenant over its engine queue bound gets 429 engine_busy with Retry-After
 * at once (not a stall), nothing is written, and the same request succeeds once the engine is
 * free; a study whose cost (dimension × batch × active set) exceeds STUDY_COST_MAX is refused at
 * creation with a 400 naming batch_size.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { InlineEngineRunner, LanedEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { SqliteStorage } from '../../src/storage/index.js';
import { braninStudy } from '../helpers/loop.js';

let app: FastifyInstance;
afterEach(async () => {
  await app?.close();
});

/** An inline engine whose asks wait until `open()` is called. */
function gatedEngine() {
  const inner = new InlineEngineRunner();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const runner: EngineRunner = {
    async run(task: EngineTask) {
      if (task.op === 'ask') await gate;
      return inner.run(task);
    },
    close: () => inner.close(),
  };
  return { runner, open, gate, inner };
}

const heavyStudy = (name: string) => braninStudy('prob-cmaes', { name, batch_size: 2, options: { candidates: 32 } });

describe('fair engine time over HTTP', () => {
  it('429 engine_busy with Retry-After when the tenant has its bound of engine calls in flight; the same request succeeds later', async () => {
    const engine = gatedEngine();
    app = await buildApp({
      config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000, engineQueue: { perTenant: 1, perStudy: 2, maxWaitMs: 60_000, lightMs: 50 } },
      storage: SqliteStorage.open(':memory:'),
      engine: engine.runner,
    });
    const a = (await app.inject({ method: 'POST', url: '/v1/studies', payload: heavyStudy('a') })).json().id as string;
    const b = (await app.inject({ method: 'POST', url: '/v1/studies', payload: heavyStudy('b') })).json().id as string;
    const blocked = app.inject({ method: 'GET', url: `/v1/studies/${a}/suggestions?count=1` });
    await new Promise((r) => setTimeout(r, 50));
    // The refusal comes at once: if b's call were queued instead, it would wait for the gate, so
    // the answer is awaited for 5 s at most and a missing one fails here (the gate is then opened
    // so that nothing stays blocked), not by the test's timeout.
    const pending = app.inject({ method: 'GET', url: `/v1/studies/${b}/suggestions?count=1` });
    const busy = await Promise.race([pending, new Promise<null>((r) => setTimeout(() => r(null), 5000).unref())]);
    if (busy === null) {
      engine.open();
      await Promise.all([blocked, pending]);
      expect.fail('no answer within 5 s: the call was queued behind the engine instead of refused');
    }
    expect(busy.statusCode).toBe(429);
    expect(busy.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(busy.json()).toMatchObject({ status: 429, code: 'engine_busy' });
    // Nothing was written for b.
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${b}` })).json().trial_counts.REQUESTED).toBe(0);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/probnes_engine_rejected_total\{method="prob-cmaes",op="ask"\} 1/);
    expect(metrics).toMatch(/probnes_engine_running_heavy 1/);
    engine.open();
    expect((await blocked).statusCode).toBe(200);
    const retried = await app.inject({ method: 'GET', url: `/v1/studies/${b}/suggestions?count=1` });
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json().trials).toHaveLength(1);
  });
});

describe('model views in a lane of their own', () => {
  it('a tenant\'s views over its bound get 429 engine_busy with Retry-After at once, while its loop and the views in flight go on', async () => {
    // Views run on a pool whose calls wait for the gate; the loop's calls run inline.
    const views = gatedEngine();
    const gatedViews: EngineRunner = { run: (task: EngineTask) => (task.op === 'model-view' ? views.gate.then(() => views.inner.run(task)) : views.inner.run(task)), close: async () => {} };
    app = await buildApp({
      config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 },
      storage: SqliteStorage.open(':memory:'),
      engine: new LanedEngineRunner(new InlineEngineRunner(), new InlineEngineRunner(), gatedViews),
    });
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('cmaes', { batch_size: 4 }) })).json().id as string;
    const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=4` })).json().trials as { trial_id: number; parameters: Record<string, number> }[];
    const observed = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: trials.map((t) => ({ trial_id: t.trial_id, value: t.parameters.x1! + t.parameters.x2! })) } });
    expect(observed.statusCode, observed.body).toBe(200);
    // Two different views (no shared computation) fill the tenant's bound of two.
    const inFlight = [app.inject({ method: 'GET', url: `/v1/studies/${id}/model/importance` }), app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x1&y=x2&n=5` })];
    await new Promise((r) => setTimeout(r, 50));
    const third = app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x1&y=x2&n=6` });
    const busy = await Promise.race([third, new Promise<null>((r) => setTimeout(() => r(null), 5000).unref())]);
    if (busy === null) {
      views.open();
      await Promise.all([...inFlight, third]);
      expect.fail('no answer within 5 s: the view was queued behind the others instead of refused');
    }
    expect(busy.statusCode).toBe(429);
    expect(Number(busy.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(busy.json()).toMatchObject({ status: 429, code: 'engine_busy' });
    expect(busy.json().detail).toMatch(/model views/);
    // The same tenant's loop is not held up by its views.
    const suggest = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1` });
    expect(suggest.statusCode, suggest.body).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/probnes_engine_views_running 1/);
    views.open();
    for (const r of await Promise.all(inFlight)) expect(r.statusCode, r.body).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=x1&y=x2&n=6` })).statusCode).toBe(200);
  });
});

describe('the cost of a study', () => {
  it('400 at /batch_size when dimension × batch × active set exceeds STUDY_COST_MAX; max_trials bounds a model that uses every point', async () => {
    app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000, studyCostMax: 10_000 }, storage: SqliteStorage.open(':memory:') });
    const create = (body: Record<string, unknown>) => app.inject({ method: 'POST', url: '/v1/studies', payload: body });
    // BO fits every evaluation: without max_trials it is checked at 1000 (2 × 10 × 1000 = 20 000).
    const refused = await create(braninStudy('bo', { batch_size: 10 }));
    expect(refused.statusCode).toBe(400);
    const problem = refused.json();
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors[0].path).toBe('/batch_size');
    expect(problem.errors[0].message).toMatch(/dimension 2 × batch_size 10 × active set 1000/);
    expect((await create(braninStudy('bo', { batch_size: 10, max_trials: 400 }))).statusCode).toBe(201);
    // ProbNES with a capped active set: the cap (or the quadratic floor) is its bound.
    expect((await create(braninStudy('prob-cmaes', { batch_size: 10, options: { active_set_cap: 400 } }))).statusCode).toBe(201);
    expect((await create(braninStudy('prob-cmaes', { batch_size: 10, options: { active_set_cap: 600 } }))).statusCode).toBe(400);
    // Model-free methods cost d × batch.
    expect((await create(braninStudy('cmaes', { batch_size: 100 }))).statusCode).toBe(201);
  });

  it('an import is held to the same limit, before its dry run (a document exported by a server with a higher limit)', async () => {
    const loose = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 }, storage: SqliteStorage.open(':memory:') });
    const made = await loose.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('bo', { batch_size: 10 }) });
    expect(made.statusCode, made.body).toBe(201);
    const doc = (await loose.inject({ method: 'GET', url: `/v1/studies/${made.json().id}/export` })).json();
    await loose.close();
    app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000, studyCostMax: 10_000 }, storage: SqliteStorage.open(':memory:') });
    const refused = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors[0].path).toBe('/batch_size');
    expect(refused.json().errors[0].message).toMatch(/dimension 2 × batch_size 10 × active set 1000/);
    const within = await app.inject({ method: 'POST', url: '/v1/studies/import', payload: { ...doc, study: { ...doc.study, max_trials: 400 } } });
    expect(within.statusCode, within.body).toBe(201);
  });

  it('the default limit takes the heaviest default study (100 parameters, batch 100, prob-cmaes) and refuses a larger active set', async () => {
    app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000, studyCostMax: 100_000_000 }, storage: SqliteStorage.open(':memory:') });
    const parameters = Array.from({ length: 100 }, (_, i) => ({ name: `x${i}`, bounds: [-5, 5] }));
    const ok = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'big', method: 'prob-cmaes', batch_size: 100, parameters } });
    expect(ok.statusCode, ok.body).toBe(201);
    const tooBig = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'big', method: 'prob-cmaes', batch_size: 100, parameters, options: { active_set_cap: 20_000 } } });
    expect(tooBig.statusCode).toBe(400);
    expect(tooBig.json().errors[0].path).toBe('/batch_size');
  });
});
