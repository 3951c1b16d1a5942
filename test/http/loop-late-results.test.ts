/**
 * Late results over HTTP, in the scenario that used to lose them: worker 1 takes trials 1–3 (the
 * first of generation 0), worker 2 takes the next generation_size G (the rest of the generation and
 * extras: 4–6 for a batch of 3), both leases expire, worker 2's G results complete generation 0 and
 * the update supersedes 1–3 (ABANDONED, failure_reason superseded). Worker 1's result for trial 1
 * must still be accepted: COMPLETED with late=true, in /best and the history, in the data the next
 * update is computed from, counted toward max_trials, idempotent like any result. A trial its client
 * abandoned or failed takes no result. For CMA-ES, for ProbNES (prob-cmaes) in its natural-gradient
 * generations of batch_size (start_phase off), and for ProbNES in Powell's start phase, the default
 * (docs/ALGORITHM.md §29: generation 0 is the 2d + 1 = 5 point stencil, then one result per generation).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { HistoryStore, isHistoryDelta } from '../../src/domain/pool/history-store.js';
import { methodFacts, type MethodName, type Observation } from '../../src/engine/index.js';
import { branin, braninStudy, clock, fastOptions, loopApp, type Clock } from '../helpers/loop.js';

/**
 * Runs the engine inline and keeps the history of every update (what the model learns from), as
 * the engine reads it: a history sent as a tail is resolved by a store of the recorder's own, which
 * sees the same calls as the engine thread's.
 */
class RecordingRunner implements EngineRunner {
  private readonly inner = new InlineEngineRunner();
  private readonly store = new HistoryStore();
  readonly tells: Observation[][] = [];
  run(task: EngineTask) {
    if (task.op === 'ask' && isHistoryDelta(task.ctx.history)) this.store.resolve(task.ctx.history);
    if (task.op === 'tell') {
      const h = task.ctx.history;
      const seen = isHistoryDelta(h) ? this.store.resolve(h) : h;
      if (seen) this.tells.push(structuredClone(seen));
    }
    return this.inner.run(task);
  }
  async close() {}
}

type Trial = { trial_id: number; state: string; generation: number; value: number | null; failure_reason: string | null; late: boolean; parameters: Record<string, number> };

const apps: FastifyInstance[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

/** A value below Branin's minimum (0.397887), so the late result is the study's best. */
const LATE_VALUE = 0.25;

/**
 * The cases: a method, its options on top of fastOptions, and generation 0's size G (batch_size 3,
 * or the start phase's stencil of 2d + 1 = 5 on Branin).
 */
interface Case {
  label: string;
  method: MethodName;
  options: Record<string, unknown>;
  size: number;
}
const CASES: Case[] = [
  { label: 'prob-cmaes (start phase)', method: 'prob-cmaes', options: {}, size: 5 },
  // The natural-gradient generations of batch_size, as before the start phase (ALGORITHM.md §29: start_phase off).
  { label: 'prob-cmaes (start_phase off)', method: 'prob-cmaes', options: { start_phase: 'off' }, size: 3 },
  { label: 'cmaes', method: 'cmaes', options: {}, size: 3 },
];

async function scenario(c: Case, overrides: Record<string, unknown> = {}) {
  const { method, size } = c;
  const t: Clock = clock();
  const runner = new RecordingRunner();
  const { app, storage } = await loopApp({ clock: t, engine: runner });
  apps.push(app);
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy(method, { lease_seconds: 60, batch_size: 3, options: { ...fastOptions(method), ...c.options }, ...overrides }) });
  expect(created.statusCode, created.body).toBe(201);
  const id: string = created.json().id;
  const answer = async (count: number, client: string) => {
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}&client_id=${client}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { trials: Trial[]; generation: number; generation_size: number };
  };
  const suggest = async (count: number, client: string) => (await answer(count, client)).trials;
  const observe = (obs: { trial_id: number; value: number }[]) => app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
  const trial = async (n: number): Promise<Trial> => (await app.inject({ method: 'GET', url: `/v1/studies/${id}/trials/${n}` })).json();
  const study = async () => (await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json();
  const action = (n: number, what: string, payload?: object) => app.inject({ method: 'POST', url: `/v1/studies/${id}/trials/${n}/${what}`, ...(payload ? { payload } : {}) });

  const first = await answer(3, 'w1');
  expect(first.generation_size).toBe(size);
  const w1 = first.trials;
  const w2 = await suggest(size, 'w2');
  expect(w1.map((x) => [x.trial_id, x.generation])).toEqual([[1, 0], [2, 0], [3, 0]]);
  expect(w2.map((x) => [x.trial_id, x.generation])).toEqual(range(4, size).map((n) => [n, 0]));
  t.advance(61_000); // both leases expire
  const done = await observe(w2.map((x) => ({ trial_id: x.trial_id, value: branin(x.parameters) })));
  expect(done.statusCode, done.body).toBe(200);
  expect(done.json().generation).toBe(1);
  for (const n of [1, 2, 3]) expect(await trial(n)).toMatchObject({ state: 'ABANDONED', failure_reason: 'superseded', late: false });
  t.advance(1_000);
  return { app, storage, runner, id, t, w1, w2, suggest, observe, trial, study, action };
}

/** n consecutive trial ids from `from`. */
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe.each(CASES.map((c) => [c.label, c] as const))('%s: a late result for a superseded trial', (_label, c) => {
  const { method, size } = c;
  it('is accepted: COMPLETED with late=true, the best in /best and the history, idempotent, 409 for another value', async () => {
    const s = await scenario(c);
    const res = await s.observe([{ trial_id: 1, value: LATE_VALUE }]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ generation: 1, study_state: 'ACTIVE', trials: [{ trial_id: 1, state: 'COMPLETED', value: LATE_VALUE, late: true, failure_reason: null }] });
    expect(await s.trial(1)).toMatchObject({ state: 'COMPLETED', value: LATE_VALUE, late: true, failure_reason: null, generation: 0 });
    // Results that arrived in time are not late.
    for (const n of range(4, size)) expect((await s.trial(n)).late).toBe(false);
    expect((await s.study()).trial_counts).toMatchObject({ COMPLETED: size + 1, ABANDONED: 2 });

    const best = (await s.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/best` })).json();
    expect(best.observed).toMatchObject({ trial_id: 1, value: LATE_VALUE });
    const history = (await s.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/history` })).json();
    expect(history.evaluations.map((e: { trial_id: number }) => e.trial_id)).toEqual([...range(4, size), 1]);
    expect(history.evaluations[size]).toMatchObject({ value: LATE_VALUE, best_so_far: LATE_VALUE });

    // Repeats are idempotent; another value is a conflict.
    const again = await s.observe([{ trial_id: 1, value: LATE_VALUE }]);
    expect(again.statusCode).toBe(200);
    expect(again.json().trials[0]).toMatchObject({ trial_id: 1, late: true, value: LATE_VALUE });
    const other = await s.observe([{ trial_id: 1, value: LATE_VALUE + 1 }]);
    expect(other.statusCode).toBe(409);
    expect(other.json().code).toBe('trial_already_completed');
    expect((await s.study()).trial_counts.COMPLETED).toBe(size + 1);
  });

  it('joins the data of the next update like an external observation, not the batch of its own generation', async () => {
    const s = await scenario(c);
    expect(s.runner.tells).toHaveLength(1);
    // A method that reads no history (CMA-ES ranks its batch) is sent none.
    expect(s.runner.tells[0]).toHaveLength(methodFacts(method).readsHistory ? size : 0);
    if (!methodFacts(method).readsHistory) return;
    await s.observe([{ trial_id: 1, value: LATE_VALUE }]);
    // No update from it: generation 0's update was made, generation 1 has no results yet.
    expect(s.runner.tells).toHaveLength(1);
    const g1 = await s.suggest(3, 'w3');
    expect(g1.map((x) => x.generation)).toEqual([1, 1, 1]);
    const o = await s.observe(g1.map((x) => ({ trial_id: x.trial_id, value: branin(x.parameters) })));
    expect(o.json().generation).toBe(2);
    // The update of generation 1 learns from 4 … size + 3, the late 1, then generation 1's three points
    // (in the start phase generation 1 is one result: its update comes with the first of the three and
    // sees all three, reported in one request).
    expect(s.runner.tells).toHaveLength(2);
    const data = s.runner.tells[1]!;
    expect(data).toHaveLength(size + 4);
    const doc = (await s.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/export` })).json();
    const point = doc.trials.find((x: { trial_id: number }) => x.trial_id === 1).point as number[];
    expect(data[size]).toEqual({ x: point, y: LATE_VALUE });
    expect(doc.trials.find((x: { trial_id: number }) => x.trial_id === 1)).toMatchObject({ state: 'COMPLETED', late: true, value: LATE_VALUE });
    if (method === 'prob-cmaes') {
      // The GP is fitted on the active set of that data (indices into it): the late point is one of the candidates.
      const gen2 = doc.engine_states.find((e: { generation: number }) => e.generation === 2).state;
      expect(gen2.gp.activeIdx.every((i: number) => i >= 0 && i < size + 4)).toBe(true);
      expect(gen2.gp.X).toEqual(gen2.gp.activeIdx.map((i: number) => data[i]!.x));
    }
  });

  it('counts toward max_trials: the late results that reach it complete the study', async () => {
    // max_trials = every trial handed out: worker 1's three and worker 2's G.
    const s = await scenario(c, { max_trials: size + 3 });
    expect((await s.observe([{ trial_id: 1, value: 3 }])).json().study_state).toBe('ACTIVE');
    expect((await s.observe([{ trial_id: 2, value: 4 }])).json().study_state).toBe('ACTIVE');
    const last = await s.observe([{ trial_id: 3, value: 5 }]);
    expect(last.json()).toMatchObject({ study_state: 'COMPLETED', trials: [{ trial_id: 3, late: true }] });
    expect(await s.study()).toMatchObject({ state: 'COMPLETED', reason: 'max_trials_reached', trial_counts: { COMPLETED: size + 3, ABANDONED: 0 } });
  });

  it('is refused for a trial its client abandoned or failed after it was superseded, and for FAILED trials', async () => {
    const s = await scenario(c);
    // The verdict of the client that held the trial replaces the service's.
    expect((await s.action(2, 'abandon', { client_id: 'w2' })).json().code).toBe('lease_not_held');
    expect((await s.action(2, 'abandon', { client_id: 'w1' })).json()).toMatchObject({ state: 'ABANDONED', failure_reason: 'abandoned_by_client' });
    expect((await s.action(3, 'fail', { reason: 'diverged' })).json()).toMatchObject({ state: 'FAILED', failure_reason: 'diverged' });
    for (const n of [2, 3]) {
      const res = await s.observe([{ trial_id: n, value: 1 }]);
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('trial_not_active');
    }
    // All or nothing: a batch with one refused trial changes nothing, the late one included.
    expect((await s.observe([{ trial_id: 1, value: 1 }, { trial_id: 3, value: 1 }])).statusCode).toBe(409);
    expect((await s.trial(1)).state).toBe('ABANDONED');
    expect((await s.observe([{ trial_id: 1, value: 1 }])).statusCode).toBe(200);
  });

  it('survives export/import and a restart: the copy and a fresh server continue exactly as the original', async () => {
    const s = await scenario(c);
    await s.observe([{ trial_id: 1, value: LATE_VALUE }]);
    const doc = (await s.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/export` })).json();
    const imported = await s.app.inject({ method: 'POST', url: '/v1/studies/import', payload: doc });
    expect(imported.statusCode, imported.body).toBe(201);
    const copy = imported.json().id as string;
    expect((await s.app.inject({ method: 'GET', url: `/v1/studies/${copy}/trials/1` })).json()).toMatchObject({ state: 'COMPLETED', late: true, value: LATE_VALUE });
    // A second server over the same database starts with empty caches: a restart.
    const { app: restarted } = await loopApp({ clock: s.t, storage: s.storage });
    apps.push(restarted);
    const next = async (a: FastifyInstance, id: string) => {
      const params: Record<string, number>[] = [];
      for (let g = 0; g < 2; g++) {
        const res = (await a.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=w9` })).json();
        params.push(...res.trials.map((x: Trial) => x.parameters));
        const obs = res.trials.map((x: Trial) => ({ trial_id: x.trial_id, value: branin(x.parameters) }));
        expect((await a.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } })).statusCode).toBe(200);
      }
      return params;
    };
    const fromCopy = await next(s.app, copy);
    const fromRestart = await next(restarted, s.id);
    expect(fromCopy).toHaveLength(6);
    expect(fromRestart).toEqual(fromCopy);
  });
});

describe('late and the study document', () => {
  it('a document without `late` (an older server) imports with late=false; late on a trial that is not a COMPLETED suggested one is refused', async () => {
    const s = await scenario(CASES.find((c) => c.method === 'cmaes')!);
    await s.observe([{ trial_id: 1, value: LATE_VALUE }]);
    const doc = (await s.app.inject({ method: 'GET', url: `/v1/studies/${s.id}/export` })).json();
    const old = structuredClone(doc);
    for (const t of old.trials) delete t.late;
    const imported = await s.app.inject({ method: 'POST', url: '/v1/studies/import', payload: old });
    expect(imported.statusCode, imported.body).toBe(201);
    expect((await s.app.inject({ method: 'GET', url: `/v1/studies/${imported.json().id}/trials/1` })).json().late).toBe(false);
    const bad = structuredClone(doc);
    const i = bad.trials.findIndex((t: Trial) => t.trial_id === 2);
    bad.trials[i].late = true;
    const refused = await s.app.inject({ method: 'POST', url: '/v1/studies/import', payload: bad });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toContainEqual({ path: `/trials/${i}/late`, message: 'only a COMPLETED suggested trial can have a late result' });
  });
});
