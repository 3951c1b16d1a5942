/**
 * The model views of a study with several objectives (docs/multi-objective.md#the-model-views):
 * `objective` picks the objective, the view fits a GP to its values (never the method's GP, which
 * models a scalarisation), the means are in the objective's own units and direction, the cache keeps
 * objectives apart, an unknown objective is a 400 at /objective, an infeasible trial is not in the
 * model while one over a constraint is, and one-objective studies answer as before with their
 * objective named.
 *
 * The study: x, y ∈ [−3, 3]; err = (x − A)² + 0.1·y² minimised, acc = −(x − B)² maximised, a
 * constraint c (reported 1, violated, for one trial; −1 otherwise) and one trial reported infeasible.
 * So err's model is lowest near x = A and acc's highest near x = B (both exactly, on the noiseless
 * quadratics the GP interpolates), acc's maximum about 0 and never far above it.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { PostgresStorage, SqliteStorage, type Storage } from '../../src/storage/index.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const A = -1;
const B = 1.5;
const err = (p: { x: number; y: number }) => (p.x - A) ** 2 + 0.1 * p.y ** 2;
const acc = (p: { x: number; y: number }) => -((p.x - B) ** 2);

type Trial = { trial_id: number; parameters: { x: number; y: number } };
type Grid = { objective: string; source: string; n_points: number; x: { values: number[] }; y: { values: number[] }; mean: number[][]; loss: number[][]; points: { trial_id: number; value: number; in_model: boolean }[] };
type Importance = { objective: string; source: string; n_points: number; parameters: { name: string; relevance: number; lengthscale: number }[] };

/** The grid cell where f is extreme: its x (the grid's value on that column). */
function argExtreme(g: Grid, sign: 1 | -1): { x: number; value: number } {
  let best = { x: NaN, value: -Infinity * sign };
  for (const row of g.mean) row.forEach((v, ix) => {
    if (sign * v > sign * best.value) best = { x: g.x.values[ix]!, value: v };
  });
  return best;
}

const server = postgresServer();

for (const backend of ['sqlite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !server)(backend, () => {
    let t: TestApp;
    let db: TestDatabase | null = null;
    const ids: Record<string, string> = {};
    /** Per study: the trials reported with values, the one over the constraint, the one reported infeasible. */
    const reported: Record<string, { withValues: Map<number, number[]>; violating: number; infeasible: number }> = {};
    const call = (app: FastifyInstance, url: string) => injectOk(app, 'GET', url);

    async function drive(method: string, generations: number, extra: Record<string, unknown>): Promise<string> {
      const study = await injectOk(t.app, 'POST', '/v1/studies', {
        name: `objectives-${method}`,
        method,
        batch_size: 6,
        seed: 7,
        parameters: [
          { name: 'x', type: 'float', bounds: [-3, 3], prior: { mean: 0, std: 1.5 } },
          { name: 'y', type: 'float', bounds: [-3, 3], prior: { mean: 0, std: 1.5 } },
        ],
        objectives: [
          { name: 'err', direction: 'minimize' },
          { name: 'acc', direction: 'maximize' },
        ],
        constraints: [{ name: 'c' }],
        ...extra,
      });
      const rec = { withValues: new Map<number, number[]>(), violating: -1, infeasible: -1 };
      for (let g = 0; g < generations; g++) {
        const s = await injectOk(t.app, 'GET', `/v1/studies/${study.id}/suggestions?count=6&client_id=w`);
        const observations = (s.trials as Trial[]).map((tr, i) => {
          // The first generation's second trial is infeasible (no values), its third over the constraint.
          if (g === 0 && i === 1) {
            rec.infeasible = tr.trial_id;
            return { trial_id: tr.trial_id, infeasible: true };
          }
          const values = [err(tr.parameters), acc(tr.parameters)];
          rec.withValues.set(tr.trial_id, values);
          const violates = g === 0 && i === 2;
          if (violates) rec.violating = tr.trial_id;
          return { trial_id: tr.trial_id, values, constraints: [violates ? 1 : -1] };
        });
        await injectOk(t.app, 'POST', `/v1/studies/${study.id}/observations`, { observations });
      }
      reported[study.id] = rec;
      return study.id as string;
    }

    beforeAll(async () => {
      let storage: Storage;
      if (backend === 'sqlite') storage = SqliteStorage.open(':memory:');
      else {
        db = await createTestDatabase(server!, 'probnes_model_objectives');
        storage = await PostgresStorage.open({ url: db.url, poolSize: 2 });
      }
      t = await makeTestApp({ storage });
      ids.random = await drive('random', 4, {});
      ids['prob-cmaes'] = await drive('prob-cmaes', 4, { options: { candidates: 64 } });
      // Nothing but an infeasible report: no values of either objective to learn from.
      const empty = await injectOk(t.app, 'POST', '/v1/studies', { name: 'objectives-empty', method: 'random', batch_size: 2, parameters: [{ name: 'x', bounds: [0, 1] }, { name: 'y', bounds: [0, 1] }], objectives: [{ name: 'err', direction: 'minimize' }, { name: 'acc', direction: 'maximize' }] });
      const s = await injectOk(t.app, 'GET', `/v1/studies/${empty.id}/suggestions?count=2&client_id=w`);
      await injectOk(t.app, 'POST', `/v1/studies/${empty.id}/observations`, { observations: (s.trials as Trial[]).map((tr) => ({ trial_id: tr.trial_id, infeasible: true })) });
      ids.empty = empty.id;
      // One objective, named and maximised, and one undeclared: their views as before.
      const one = await injectOk(t.app, 'POST', '/v1/studies', { name: 'one-named', method: 'prob-cmaes', batch_size: 4, seed: 5, options: { candidates: 64 }, parameters: [{ name: 'x', bounds: [-3, 3] }, { name: 'y', bounds: [-3, 3] }], objectives: [{ name: 'score', direction: 'maximize' }] });
      for (let g = 0; g < 3; g++) {
        const q = await injectOk(t.app, 'GET', `/v1/studies/${one.id}/suggestions?count=4&client_id=w`);
        await injectOk(t.app, 'POST', `/v1/studies/${one.id}/observations`, { observations: (q.trials as Trial[]).map((tr) => ({ trial_id: tr.trial_id, value: acc(tr.parameters) })) });
      }
      ids.one = one.id;
      const plain = await injectOk(t.app, 'POST', '/v1/studies', { name: 'one-plain', method: 'random', batch_size: 4, seed: 5, parameters: [{ name: 'x', bounds: [-3, 3] }, { name: 'y', bounds: [-3, 3] }] });
      const q = await injectOk(t.app, 'GET', `/v1/studies/${plain.id}/suggestions?count=4&client_id=w`);
      await injectOk(t.app, 'POST', `/v1/studies/${plain.id}/observations`, { observations: (q.trials as Trial[]).map((tr) => ({ trial_id: tr.trial_id, value: err(tr.parameters) })) });
      ids.plain = plain.id;
      // Two objectives with the same reported values, one minimised and one maximised: the same data,
      // so only the objective in the cache's keys tells their answers apart.
      const mirror = await injectOk(t.app, 'POST', '/v1/studies', { name: 'mirror', method: 'random', batch_size: 8, seed: 5, parameters: [{ name: 'x', bounds: [-3, 3] }, { name: 'y', bounds: [-3, 3] }], objectives: [{ name: 'lo', direction: 'minimize' }, { name: 'hi', direction: 'maximize' }] });
      const m = await injectOk(t.app, 'GET', `/v1/studies/${mirror.id}/suggestions?count=8&client_id=w`);
      await injectOk(t.app, 'POST', `/v1/studies/${mirror.id}/observations`, { observations: (m.trials as Trial[]).map((tr) => ({ trial_id: tr.trial_id, values: [err(tr.parameters), err(tr.parameters)] })) });
      ids.mirror = mirror.id;
    }, 180_000);
    afterAll(async () => {
      await t?.app.close();
      await t?.storage.close();
      await db?.drop();
    });

    describe.each(['random', 'prob-cmaes'])('two objectives, %s', (method) => {
      const grid = (objective: string | null) => `/v1/studies/${ids[method]}/model/grid?x=x&y=y&n=25${objective === null ? '' : `&objective=${objective}`}`;

      it('err (the default, minimised): a GP fitted to its values, lowest near x = A, its values drawn', async () => {
        const g: Grid = await call(t.app, grid(null));
        expect(g.objective).toBe('err');
        // prob-cmaes's own GP models a scalarisation of both: never shown.
        expect(g.source).toBe('fitted');
        const low = argExtreme(g, -1);
        expect(Math.abs(low.x - A)).toBeLessThan(0.4);
        // Minimised: the loss is the mean itself.
        expect(g.loss).toEqual(g.mean);
        // The drawn values are err's, of every trial with values (the infeasible one has none), in the model.
        const rec = reported[ids[method]!]!;
        expect(new Map(g.points.map((p) => [p.trial_id, p.value]))).toEqual(new Map([...rec.withValues].map(([id, v]) => [id, v[0]!])));
        expect(g.n_points).toBe(rec.withValues.size);
        expect(g.points.every((p) => p.in_model)).toBe(true);
        expect(g.points.some((p) => p.trial_id === rec.violating)).toBe(true);
        expect(g.points.some((p) => p.trial_id === rec.infeasible)).toBe(false);
        expect(await call(t.app, grid('err'))).toEqual(g);
      });

      it('acc (maximised): highest near x = B, in its own units (about 0 at best, never far above), its loss the negated mean', async () => {
        const g: Grid = await call(t.app, grid('acc'));
        expect(g.objective).toBe('acc');
        expect(g.source).toBe('fitted');
        const high = argExtreme(g, 1);
        expect(Math.abs(high.x - B)).toBeLessThan(0.4);
        // acc ≤ 0 everywhere, 0 at x = B: the GP's mean interpolates it, so its maximum is near 0 from either side.
        expect(Math.abs(high.value)).toBeLessThan(0.5);
        // Far from B (the grid's edge away from it) acc is strongly negative.
        expect(Math.min(...g.mean.flat())).toBeLessThan(-3);
        expect(g.loss.flat()).toEqual(g.mean.flat().map((v) => -v));
        const rec = reported[ids[method]!]!;
        expect(new Map(g.points.map((p) => [p.trial_id, p.value]))).toEqual(new Map([...rec.withValues].map(([id, v]) => [id, v[1]!])));
        expect(g.n_points).toBe(rec.withValues.size);
      });

      it('importance for both objectives: fitted, named, x more relevant than y', async () => {
        for (const objective of ['err', 'acc']) {
          const v: Importance = await call(t.app, `/v1/studies/${ids[method]}/model/importance?objective=${objective}`);
          expect(v.objective).toBe(objective);
          expect(v.source).toBe('fitted');
          expect(v.n_points).toBe(reported[ids[method]!]!.withValues.size);
          const [x, y] = v.parameters;
          expect(x!.relevance).toBeGreaterThan(y!.relevance);
        }
      });

      it('the cache keeps the objectives apart: acc after err answers as acc asked first, from a server with an empty cache', async () => {
        const e: Grid = await call(t.app, grid('err'));
        const a: Grid = await call(t.app, grid('acc'));
        expect(a.mean).not.toEqual(e.mean);
        const ie: Importance = await call(t.app, `/v1/studies/${ids[method]}/model/importance?objective=err`);
        const ia: Importance = await call(t.app, `/v1/studies/${ids[method]}/model/importance?objective=acc`);
        // A fit shared between objectives would give both the same length scales.
        expect(ia.parameters[0]!.lengthscale).not.toBe(ie.parameters[0]!.lengthscale);
        const fresh = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 60_000 }, storage: t.storage });
        try {
          expect(await call(fresh, grid('acc'))).toEqual(a);
          expect(await call(fresh, `/v1/studies/${ids[method]}/model/importance?objective=acc`)).toEqual(ia);
        } finally {
          await fresh.close();
        }
      }, 60_000);
    });

    it('the same values, opposite directions: each objective its own answer (the cache keys name the objective)', async () => {
      const url = (o: string) => `/v1/studies/${ids.mirror}/model/grid?x=x&y=y&n=8&objective=${o}`;
      const lo: Grid = await call(t.app, url('lo'));
      const hi: Grid = await call(t.app, url('hi'));
      expect([lo.objective, hi.objective]).toEqual(['lo', 'hi']);
      // The engine learns y for lo and −y for hi: the same mean in the values' units, opposite losses.
      expect(lo.loss.flat()).toEqual(lo.mean.flat());
      hi.loss.flat().forEach((v, i) => expect(v).toBeCloseTo(-lo.loss.flat()[i]!, 6));
      const il: Importance = await call(t.app, `/v1/studies/${ids.mirror}/model/importance?objective=lo`);
      expect((await call(t.app, `/v1/studies/${ids.mirror}/model/importance?objective=hi`)).objective).toBe('hi');
      expect(il.objective).toBe('lo');
    });

    it('an unknown objective is a 400 at /objective naming the study\'s objectives, on both views', async () => {
      for (const url of [`/v1/studies/${ids.random}/model/grid?x=x&y=y&objective=loss`, `/v1/studies/${ids.random}/model/importance?objective=loss`]) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(400);
        expect(res.headers['content-type']).toContain('application/problem+json');
        expect(res.json().code).toBe('validation_failed');
        expect(res.json().errors).toHaveLength(1);
        expect(res.json().errors[0].path).toBe('/objective');
        expect(res.json().errors[0].message).toMatch(/"loss".*"err", "acc"/);
      }
    });

    it('no values of the objective (only an infeasible report): 409 model_unavailable naming the objective', async () => {
      const res = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.empty}/model/grid?x=x&y=y&objective=acc` });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('model_unavailable');
      expect(res.json().detail).toMatch(/0 completed evaluations with a value of "acc"/);
    });

    it('one objective: named in the answer, its own name or none accepted, another refused; the method\'s GP as before', async () => {
      const g: Grid = await call(t.app, `/v1/studies/${ids.one}/model/grid?x=x&y=y&n=10`);
      expect(g.objective).toBe('score');
      expect(g.source).toBe('method');
      expect(await call(t.app, `/v1/studies/${ids.one}/model/grid?x=x&y=y&n=10&objective=score`)).toEqual(g);
      // Maximised: the mean in its own direction, highest near B.
      expect(Math.abs(argExtreme(g, 1).x - B)).toBeLessThan(0.75);
      const bad = await t.app.inject({ method: 'GET', url: `/v1/studies/${ids.one}/model/importance?objective=value` });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors[0]).toMatchObject({ path: '/objective' });
      expect(bad.json().errors[0].message).toMatch(/objective is "score"/);
      const p: Importance = await call(t.app, `/v1/studies/${ids.plain}/model/importance?objective=value`);
      expect(p.objective).toBe('value');
      expect(p.source).toBe('fitted');
      expect((await call(t.app, `/v1/studies/${ids.plain}/model/importance`)).objective).toBe('value');
    });

    it('several objectives: the view reads one bounded range of trials, never the study\'s whole list', async () => {
      const calls: { name: string; args: unknown[] }[] = [];
      const storage = t.storage as unknown as Record<string, (...a: unknown[]) => unknown>;
      const spied = ['listTrials', 'listCompletedTrials', 'listAllTrials', 'listRecentCompleted'] as const;
      const originals = spied.map((name) => storage[name]!);
      spied.forEach((name, k) => {
        storage[name] = (...args: unknown[]) => {
          calls.push({ name, args });
          return originals[k]!.apply(t.storage, args);
        };
      });
      try {
        const g: Grid = await call(t.app, `/v1/studies/${ids.random}/model/grid?x=x&y=y&n=5&objective=acc`);
        expect(g.n_points).toBe(reported[ids.random]!.withValues.size);
        await call(t.app, `/v1/studies/${ids.random}/model/importance?objective=acc`);
      } finally {
        spied.forEach((name, k) => (storage[name] = originals[k]!));
      }
      expect(calls.filter((c) => c.name === 'listCompletedTrials' || c.name === 'listAllTrials')).toEqual([]);
      const ranges = calls.filter((c) => c.name === 'listTrials');
      expect(ranges.length).toBeGreaterThan(0);
      // The COMPLETED trials among the last MULTI_VIEW_WINDOW = 1300 ids: the study's 24 trials are all inside it.
      for (const c of ranges) expect(c.args[1]).toEqual({ state: 'COMPLETED', after: '0', limit: 1300 });
    });
  });
}
