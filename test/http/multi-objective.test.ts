/**
 * Several objectives, constraints and infeasible points through the API (docs/multi-objective.md):
 * declaring them, reporting them, the trial fields, /best, the front and its hypervolume history,
 * and the 400s for every malformed result (nothing of a refused batch is written).
 *
 * Expected fronts and hypervolumes are computed by hand from the reported values: with losses
 * (minimised) L = {(1,4), (2,2), (4,1)} and r = (5,5), the staircase's area is
 * (5−1)(5−4) + (5−2)(4−2) + (5−4)(2−1) = 4 + 6 + 1 = 11.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PostgresStorage, SqliteStorage, type Storage } from '../../src/storage/index.js';
import { injectOk, makeTestApp, studyBody } from '../helpers/app.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const server = postgresServer();
let app: FastifyInstance;
let cleanup: () => Promise<void>;

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(app, method, url, payload);
const raw = (method: 'GET' | 'POST', url: string, payload?: object) => app.inject({ method, url, ...(payload ? { payload } : {}) });

type Trial = { trial_id: number; value: number | null; values: number[] | null; losses: number[] | null; feasible: boolean | null; infeasible: boolean; constraints: number[] | null };

async function suggest(id: string, n: number): Promise<Trial[]> {
  return (await call('GET', `/v1/studies/${id}/suggestions?count=${n}&client_id=w`)).trials;
}

const twoObjectives = (overrides: Record<string, unknown> = {}) =>
  studyBody({
    objectives: [
      { name: 'error', direction: 'minimize' },
      { name: 'accuracy', direction: 'maximize' },
    ],
    method: 'random',
    batch_size: 4,
    seed: 3,
    ...overrides,
  });

/** Every check on both databases (PostgreSQL: a database of its own per test). */
for (const backend of ['sqlite', 'postgres'] as const) {
describe.skipIf(backend === 'postgres' && !server)(backend, () => {
  beforeEach(async () => {
    let storage: Storage;
    let db: TestDatabase | null = null;
    if (backend === 'sqlite') storage = SqliteStorage.open(':memory:');
    else {
      db = await createTestDatabase(server!, 'probnes_multi');
      storage = await PostgresStorage.open({ url: db.url, poolSize: 2 });
    }
    ({ app } = await makeTestApp({ storage }));
    cleanup = async () => {
      await app.close();
      await storage.close();
      await db?.drop();
    };
  });
  afterEach(async () => {
    await cleanup();
  });

  describe('several objectives', () => {
    it('are declared, echoed, reported as values, and answer the front with its hypervolume', async () => {
      const study = await call('POST', '/v1/studies', twoObjectives({ reference_point: [5, -5] }));
      expect(study.objectives).toEqual([
        { name: 'error', direction: 'minimize' },
        { name: 'accuracy', direction: 'maximize' },
      ]);
      expect(study.constraints).toEqual([]);
      expect(study.reference_point).toEqual([5, -5]);
      expect(study.direction).toBe('minimize');
      const trials = await suggest(study.id, 4);
      // accuracy is maximised: its losses are the negated values. Losses: (1,4), (2,2), (4,1), (3,3) — the last is dominated by (2,2).
      const values = [
        [1, -4],
        [2, -2],
        [4, -1],
        [3, -3],
      ];
      const observed = await call('POST', `/v1/studies/${study.id}/observations`, { observations: trials.map((t, i) => ({ trial_id: t.trial_id, values: values[i] })) });
      expect(observed.trials.map((t: Trial) => t.value)).toEqual([null, null, null, null]);
      expect(observed.trials.map((t: Trial) => t.values)).toEqual(values);
      expect(observed.trials.map((t: Trial) => t.losses)).toEqual(values.map(([a, b]) => [a, -b! + 0]));
      expect(observed.trials.every((t: Trial) => t.feasible === true)).toBe(true);

      const front = await call('GET', `/v1/studies/${study.id}/front`);
      expect(front.front_size).toBe(3);
      expect(front.trials.map((t: Trial) => t.values)).toEqual([values[0], values[1], values[2]]);
      expect(front.reference_point).toEqual({ value: [5, -5], derived: false });
      expect(front.hypervolume).toBeCloseTo(11, 12);
      expect(front.evaluation_count).toBe(4);
      expect(front.feasible_count).toBe(4);

      const best = await call('GET', `/v1/studies/${study.id}/best`);
      expect(best.observed).toBeNull();
      expect(best.front).toEqual({ size: 3, hypervolume: front.hypervolume });

      // In completion order (all four completed together, so by trial id): after (1,4): 4·1 = 4; after (2,2): 4 + 3·2 = 10; after (4,1): 11; (3,3) adds nothing.
      const history = await call('GET', `/v1/studies/${study.id}/front/history`);
      expect(history.points.map((p: { hypervolume: number }) => p.hypervolume)).toEqual([4, 10, 11, 11]);
      expect(history.points.map((p: { front_size: number }) => p.front_size)).toEqual([1, 2, 3, 3]);
    });

    it('pages the front, and derives a reference point when none is declared', async () => {
      const study = await call('POST', '/v1/studies', twoObjectives());
      const trials = await suggest(study.id, 4);
      const values = [
        [1, -4],
        [2, -2],
        [4, -1],
        [3, -3],
      ];
      await call('POST', `/v1/studies/${study.id}/observations`, { observations: trials.map((t, i) => ({ trial_id: t.trial_id, values: values[i] })) });
      const first = await call('GET', `/v1/studies/${study.id}/front?page_size=2`);
      expect(first.trials).toHaveLength(2);
      expect(first.next_page_token).not.toBeNull();
      const second = await call('GET', `/v1/studies/${study.id}/front?page_size=2&page_token=${encodeURIComponent(first.next_page_token)}`);
      expect(second.trials.map((t: Trial) => t.values)).toEqual([values[2]]);
      expect(second.next_page_token).toBeNull();
      // Derived in losses: nadir (4, 4), ideal (1, 1): r = 4 + 0.1·3 = 4.3 each; accuracy's value is −4.3.
      expect(first.reference_point.derived).toBe(true);
      expect(first.reference_point.value[0]).toBeCloseTo(4.3, 12);
      expect(first.reference_point.value[1]).toBeCloseTo(-4.3, 12);
      // Staircase against (4.3, 4.3): 3.3·0.3 + 2.3·2 + 0.3·1 = 0.99 + 4.6 + 0.3.
      expect(first.hypervolume).toBeCloseTo(5.89, 12);
      // A token of the front does not continue its history.
      expect((await raw('GET', `/v1/studies/${study.id}/front/history?page_token=${encodeURIComponent(first.next_page_token)}`)).statusCode).toBe(400);
    });

    it('refuses every malformed result with a 400 at its pointer, and writes nothing of the batch', async () => {
      const study = await call('POST', '/v1/studies', twoObjectives());
      const [a, b] = await suggest(study.id, 2);
      const cases: [object, string, RegExp][] = [
        [{ trial_id: a!.trial_id, value: 1 }, '/observations/0/value', /2 objectives/],
        [{ trial_id: a!.trial_id, values: [1] }, '/observations/0/values', /one value per objective: 2/],
        [{ trial_id: a!.trial_id, values: [1, 2, 3] }, '/observations/0/values', /got 3/],
        [{ trial_id: a!.trial_id, values: [1, 'x'] }, '/observations/0/values/1', /number/],
        [{ trial_id: a!.trial_id, values: [1, 2], stderr: 0.1 }, '/observations/0/stderr', /several/],
        [{ trial_id: a!.trial_id, values: [1, 2], constraints: [0] }, '/observations/0/constraints', /no constraints/],
        [{ trial_id: a!.trial_id, values: [1, 2], infeasible: true }, '/observations/0/infeasible', /no value/],
        [{ trial_id: a!.trial_id }, '/observations/0/value', /missing/],
      ];
      for (const [bad, path, message] of cases) {
        const res = await raw('POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: b!.trial_id, values: [0, 0] }, bad] });
        expect(res.statusCode, JSON.stringify(bad)).toBe(400);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        const errors = res.json().errors as { path: string; message: string }[];
        const hit = errors.find((e) => e.path === path.replace('/0/', '/1/'));
        expect(hit, `${JSON.stringify(bad)}: ${JSON.stringify(errors)}`).toBeDefined();
        expect(hit!.message).toMatch(message);
      }
      // Nothing of the refused batches was written: b is still open.
      const trial = await call('GET', `/v1/studies/${study.id}/trials/${b!.trial_id}`);
      expect(trial.state).not.toBe('COMPLETED');
    });

    it('refuses at creation what cannot be: both direction and objectives, twice the same name, a reference point of the wrong length, a method that searches one objective', async () => {
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [twoObjectives({ direction: 'maximize' }), '/direction', /not both/],
        [studyBody({ objectives: [{ name: 'a', direction: 'minimize' }, { name: 'a', direction: 'maximize' }] }), '/objectives/1/name', /twice/],
        [twoObjectives({ reference_point: [1, 2, 3] }), '/reference_point', /one value per objective/],
        [studyBody({ reference_point: [1, 2] }), '/reference_point', /several objectives/],
        [twoObjectives({ method: 'cmaes' }), '/method', /prob-cmaes/],
        [studyBody({ constraints: [{ name: 'c' }], method: 'xnes' }), '/method', /constraints/],
        [twoObjectives({ method: 'prob-cmaes', options: { start_phase: 'powell' } }), '/options/start_phase', /one objective/],
        [studyBody({ objectives: [{ name: '__proto__', direction: 'minimize' }] }), '/objectives/0/name', /reserved/],
        [studyBody({ objectives: Array.from({ length: 6 }, (_, i) => ({ name: `o${i}`, direction: 'minimize' })) }), '/objectives', /5/],
      ];
      for (const [body, path, message] of cases) {
        const res = await raw('POST', '/v1/studies', body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        const errors = res.json().errors as { path: string; message: string }[];
        const hit = errors.find((e) => e.path === path);
        expect(hit, `${JSON.stringify(body)}: ${JSON.stringify(errors)}`).toBeDefined();
        expect(hit!.message).toMatch(message);
      }
      expect((await call('GET', '/v1/studies')).studies).toHaveLength(0);
    });

    it('shows the options the search runs with: no start phase for a ProbNES method with several objectives', async () => {
      const multi = await call('POST', '/v1/studies', twoObjectives({ method: 'prob-cmaes' }));
      expect(multi.options.start_phase).toBe('off');
      // One objective keeps the default profile's Powell start; a constraint alone keeps it too (one objective to model).
      expect((await call('POST', '/v1/studies', studyBody({ method: 'prob-cmaes' }))).options.start_phase).toBe('powell');
      expect((await call('POST', '/v1/studies', studyBody({ method: 'prob-cmaes', constraints: [{ name: 'c' }] }))).options.start_phase).toBe('powell');
      // Methods without a start phase show none.
      expect((await call('POST', '/v1/studies', twoObjectives())).options.start_phase).toBeUndefined();
    });
  });

  describe('constraints and infeasible points', () => {
    it('one objective with a constraint: /best and the front count feasible trials only; infeasible trials have no value', async () => {
      const study = await call('POST', '/v1/studies', studyBody({ constraints: [{ name: 'memory_over' }], method: 'random', batch_size: 4, seed: 5 }));
      expect(study.objectives).toEqual([{ name: 'value', direction: 'minimize' }]);
      expect(study.constraints).toEqual([{ name: 'memory_over' }]);
      const trials = await suggest(study.id, 4);
      const observations = [
        { trial_id: trials[0]!.trial_id, value: 0.1, constraints: [2] }, // the lowest value, but violates the constraint
        { trial_id: trials[1]!.trial_id, value: 0.5, constraints: [-1] },
        { trial_id: trials[2]!.trial_id, infeasible: true },
        { trial_id: trials[3]!.trial_id, value: 0.7, constraints: [0] }, // on the boundary: feasible
      ];
      const missing = await raw('POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: trials[0]!.trial_id, value: 1 }] });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().errors[0]).toMatchObject({ path: '/observations/0/constraints', message: expect.stringMatching(/missing/) });
      const out = (await call('POST', `/v1/studies/${study.id}/observations`, { observations })).trials as Trial[];
      expect(out.map((t) => t.feasible)).toEqual([false, true, false, true]);
      expect(out.map((t) => t.infeasible)).toEqual([false, false, true, false]);
      expect(out[2]).toMatchObject({ value: null, values: null, losses: null, constraints: null });
      expect(out[0]).toMatchObject({ value: 0.1, values: [0.1], constraints: [2] });
      const best = await call('GET', `/v1/studies/${study.id}/best`);
      expect(best.observed.value).toBe(0.5);
      expect(best.front).toBeNull();
      const front = await call('GET', `/v1/studies/${study.id}/front`);
      expect(front.trials.map((t: Trial) => t.value)).toEqual([0.5]);
      expect(front.evaluation_count).toBe(4);
      expect(front.feasible_count).toBe(2);
      // The history of /history counts feasible evaluations only.
      const history = await call('GET', `/v1/studies/${study.id}/history`);
      expect(history.evaluations.map((e: { value: number }) => e.value)).toEqual([0.5, 0.7]);
      // The same result again is a no-op; a different one is a conflict.
      expect((await raw('POST', `/v1/studies/${study.id}/observations`, { observations: [observations[2]!] })).statusCode).toBe(200);
      expect((await raw('POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: trials[2]!.trial_id, value: 1, constraints: [0] }] })).statusCode).toBe(409);
    });

    it('a study without constraints takes infeasible points, by trial and by parameters, and the loop goes on', async () => {
      const study = await call('POST', '/v1/studies', studyBody({ method: 'prob-cmaes', batch_size: 3, seed: 8 }));
      for (let round = 0; round < 4; round++) {
        const trials = await suggest(study.id, 3);
        await call('POST', `/v1/studies/${study.id}/observations`, {
          observations: trials.map((t, i) => (i === 0 ? { trial_id: t.trial_id, infeasible: true } : { trial_id: t.trial_id, value: round + i })),
        });
      }
      await call('POST', `/v1/studies/${study.id}/observations`, { observations: [{ parameters: { x: 0, lr: 0.01 }, infeasible: true }] });
      const list = (await call('GET', `/v1/studies/${study.id}/trials?state=COMPLETED&page_size=100`)).trials as Trial[];
      expect(list).toHaveLength(13);
      expect(list.filter((t) => t.infeasible)).toHaveLength(5);
      expect((await call('GET', `/v1/studies/${study.id}`)).generation).toBeGreaterThanOrEqual(3);
    });
  });

  describe('export and import', () => {
    it('carry the objectives, constraints, reference point and every result, and the copy answers the same front; a single-objective document has none of the new fields', async () => {
      const study = await call('POST', '/v1/studies', twoObjectives({ constraints: [{ name: 'c' }], reference_point: [5, -5], method: 'prob-cmaes', batch_size: 3 }));
      for (let round = 0; round < 3; round++) {
        const trials = await suggest(study.id, 3);
        await call('POST', `/v1/studies/${study.id}/observations`, {
          observations: trials.map((t, i) => (i === 2 && round === 1 ? { trial_id: t.trial_id, infeasible: true } : { trial_id: t.trial_id, values: [round + i, -(3 - i)], constraints: [i === 1 ? 1 : -1] })),
        });
      }
      const doc = await call('GET', `/v1/studies/${study.id}/export`);
      expect(doc.study.objectives).toEqual(study.objectives);
      expect(doc.study.constraints).toEqual([{ name: 'c' }]);
      expect(doc.study.reference_point).toEqual([5, -5]);
      expect(doc.trials.filter((t: { infeasible?: boolean }) => t.infeasible)).toHaveLength(1);
      const copy = await call('POST', '/v1/studies/import', doc);
      const copied = await call('GET', `/v1/studies/${copy.id}`);
      expect([copied.objectives, copied.constraints, copied.reference_point]).toEqual([study.objectives, [{ name: 'c' }], [5, -5]]);
      const [a, b] = await Promise.all([call('GET', `/v1/studies/${study.id}/front`), call('GET', `/v1/studies/${copy.id}/front`)]);
      expect(b.hypervolume).toBe(a.hypervolume);
      expect(b.trials.map((t: Trial) => t.values)).toEqual(a.trials.map((t: Trial) => t.values));
      // Feasible only: the trials with constraint value 1 are not on the front.
      expect(a.trials.every((t: Trial) => t.constraints![0]! <= 0)).toBe(true);
      // The copy continues as the original would.
      const [na, nb] = await Promise.all([suggest(study.id, 3), suggest(copy.id, 3)]);
      expect(nb.map((t) => (t as unknown as { parameters: object }).parameters)).toEqual(na.map((t) => (t as unknown as { parameters: object }).parameters));

      // A document whose trial has the wrong number of values is refused at its pointer.
      const bad = structuredClone(doc);
      const k = bad.trials.findIndex((t: { values?: number[] }) => t.values);
      bad.trials[k].values = [1];
      const res = await raw('POST', '/v1/studies/import', bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().errors.map((e: { path: string }) => e.path)).toContain(`/trials/${k}/values`);

      const plain = await call('POST', '/v1/studies', studyBody({ method: 'random', batch_size: 2 }));
      const [t] = await suggest(plain.id, 1);
      await call('POST', `/v1/studies/${plain.id}/observations`, { observations: [{ trial_id: t!.trial_id, value: 1 }] });
      const plainDoc = await call('GET', `/v1/studies/${plain.id}/export`);
      for (const key of ['objectives', 'constraints', 'reference_point']) expect(plainDoc.study).not.toHaveProperty(key);
      for (const key of ['values', 'constraints', 'infeasible']) expect(plainDoc.trials[0]).not.toHaveProperty(key);
    });
  });
});
}
