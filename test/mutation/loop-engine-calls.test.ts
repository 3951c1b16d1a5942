/**
 * The loop's calls to the engine and what it says when they fail, each on its own with a stand-in
 * runner: askEngine (engine-ask.ts) and the update of advanceIfDue (generation.ts), the history a
 * call sends (engine-history.ts), the loop's error messages (loop-errors.ts) and the observation
 * body's rules for infeasible points (observation-request.ts). Through HTTP these paths need an
 * engine that fails or answers out of turn, which a real engine never does; a wrong message or a
 * busy engine reported as broken would go unseen. Expected values follow from the modules' doc
 * comments and the API's error contract.
 */
import { describe, expect, it, vi } from 'vitest';
import { askEngine } from '../../src/domain/loop/engine-ask.js';
import { advanceIfDue, askMore, SUPERSEDED } from '../../src/domain/loop/generation.js';
import { HistoryLog, historyLength, MAX_TAIL, plainHistory, runWithHistory, wireHistory } from '../../src/domain/loop/engine-history.js';
import { ConcurrentUpdateError, LeaseNotHeldError, TrialAlreadyCompletedError, TrialNotActiveError, UnknownTrialsError } from '../../src/domain/loop/loop-errors.js';
import { countParameterKeys, MAX_OBSERVATIONS, ObservationsRequest } from '../../src/domain/loop/observation-request.js';
import { MAX_ERRORS } from '../../src/domain/common/schemas.js';
import { ValidationError } from '../../src/domain/common/errors.js';
import { LIMITS } from '../../src/domain/studies/study-request.js';
import type { LoopContext } from '../../src/domain/loop/loop-context.js';
import type { EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineResult, EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { EngineBusyError } from '../../src/domain/pool/fair-runner.js';
import { EngineUnavailableError } from '../../src/domain/studies/engine-ops.js';
import type { BaseState, Observation } from '../../src/engine/index.js';
import type { TrialRecord, TrialState } from '../../src/storage/index.js';
import { standInSnapshot } from '../helpers/stand-in-snapshot.js';

// handOut maps an internal point to user units through the study's search space; askMore's bookkeeping
// does not depend on it, so a stand-in names the point's first coordinate `x`.
vi.mock('../../src/domain/studies/engine-ops.js', async (original) => ({
  ...(await original<typeof import('../../src/domain/studies/engine-ops.js')>()),
  handOut: (_space: unknown, u: readonly number[]) => ({ parameters: { x: u[0] }, point: [...u] }),
}));

type Logged = { level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string };

/** A loop context whose runner answers with `answer` (or throws it) and whose log is kept. */
function context(answer: EngineResult | Error) {
  const logged: Logged[] = [];
  const tasks: EngineTask[] = [];
  const runner: EngineRunner = {
    async run(task: EngineTask) {
      tasks.push(task);
      if (answer instanceof Error) throw answer;
      return { result: answer, ms: 1 };
    },
    async close() {},
  };
  const ctx: LoopContext = {
    runner,
    log: { warn: (obj, msg) => logged.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }), error: (obj, msg) => logged.push({ level: 'error', obj: obj as Record<string, unknown>, msg }) },
    now: new Date('2026-01-01T00:00:00Z'),
  };
  return { ctx, logged, tasks };
}

const state = (generation: number) => ({ generation, tag: `g${generation}` }) as unknown as BaseState;
type Trial = Pick<TrialRecord, 'trialId' | 'state' | 'generation' | 'failureReason' | 'leaseExpiresAt'>;
const trial = (trialId: number, s: TrialState, generation: number): Trial => ({ trialId, state: s, generation, failureReason: null, leaseExpiresAt: s === 'ACTIVE' ? '2026-01-01T00:01:00.000Z' : null });

/** A snapshot of study `st` at generation 4 with an update due; `study` and `more` add or replace fields. */
function snapshot<X extends object>(trials: Trial[] = [], study: object = {}, more: X = {} as X) {
  return standInSnapshot(trials, {
    study: { id: 'st', tenantId: 'tn', method: 'cmaes', state: 'ACTIVE', ...study },
    engine: state(4),
    generation: 4,
    tellBatch: () => [{ trialId: 1 }],
    history: async () => plainHistory([]),
    modelObservations: async () => [{ x: [0], y: 1 }],
    ...more,
  });
}

describe('askEngine', () => {
  it('returns the points and advances the snapshot\'s engine state', async () => {
    const snap = snapshot();
    const { ctx, tasks } = context({ op: 'ask', state: state(5), points: [[0.1], [0.2]] });
    expect(await askEngine(snap, ctx, plainHistory([]), 2, [[0.3]])).toEqual([[0.1], [0.2]]);
    expect(snap.engine).toEqual(state(5));
    expect(tasks).toEqual([{ op: 'ask', method: 'cmaes', state: state(4), ctx: { history: [], pending: [[0.3]] }, count: 2 }]);
  });

  it('an answer out of turn is a failure: logged under the ask\'s name, engine_error to the client, state unchanged', async () => {
    for (const [what, msg] of [[undefined, 'engine ask failed'], ['redraw', 'engine redraw failed']] as const) {
      const snap = snapshot();
      const { ctx, logged } = context({ op: 'tell', state: state(9) });
      const err = await askEngine(snap, ctx, plainHistory([]), 1, [], what).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EngineUnavailableError);
      expect((err as EngineUnavailableError).message).toBe('the optimiser could not compute new points (engine answered tell to ask); retry later');
      expect(snap.engine).toEqual(state(4));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 'error', msg, obj: { study_id: 'st', generation: 4 } });
      expect((logged[0]!.obj.err as Error).message).toBe('engine answered tell to ask');
    }
  });

  it('a full engine queue reaches the client as it is (429), not logged as a failure', async () => {
    const busy = new EngineBusyError('the engine queue is full', 3);
    const { ctx, logged } = context(busy);
    await expect(askEngine(snapshot(), ctx, plainHistory([]), 1, [])).rejects.toBe(busy);
    expect(logged).toEqual([]);
  });
});

describe('advanceIfDue', () => {
  it('moves the distribution on and supersedes the REQUESTED points of older generations only', async () => {
    const trials = [trial(1, 'COMPLETED', 4), trial(2, 'REQUESTED', 3), trial(3, 'REQUESTED', 5), trial(4, 'ACTIVE', 3)];
    const snap = snapshot(trials);
    const { ctx, tasks } = context({ op: 'tell', state: state(5) });
    expect(await advanceIfDue(snap, ctx)).toBe(true);
    expect(snap.engine).toEqual(state(5));
    expect(tasks[0]).toMatchObject({ op: 'tell', method: 'cmaes', state: state(4), ctx: { batch: [{ x: [0], y: 1 }], history: [] } });
    expect(snap.changes).toEqual([[2, { state: 'ABANDONED', failureReason: SUPERSEDED, leaseExpiresAt: null }]]);
  });

  it('an update that fails keeps the results and says it will be retried; the state stays', async () => {
    const snap = snapshot([trial(2, 'REQUESTED', 3)]);
    const { ctx, logged } = context({ op: 'ask', state: state(9), points: [] });
    expect(await advanceIfDue(snap, ctx)).toBe(false);
    expect(snap.engine).toEqual(state(4));
    expect(snap.changes).toEqual([]);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'error', msg: 'engine update failed; results are kept and the update is retried on the next request', obj: { study_id: 'st', generation: 4 } });
    expect((logged[0]!.obj.err as Error).message).toBe('engine answered ask to tell');
  });

  it('a full engine queue is a warning, not a failure: the update waits for the next request', async () => {
    const snap = snapshot();
    const { ctx, logged } = context(new EngineBusyError('full', 1));
    expect(await advanceIfDue(snap, ctx)).toBe(false);
    expect(logged).toEqual([{ level: 'warn', obj: { study_id: 'st', generation: 4 }, msg: 'engine busy: the update waits for the next request' }]);
  });
});

describe('advanceIfDue when nothing is due', () => {
  it('makes no engine call and reports no move without a due batch, or once the study is COMPLETED', async () => {
    for (const [batch, studyState] of [[null, 'ACTIVE'], [[{ trialId: 1 }], 'COMPLETED']] as const) {
      const snap = snapshot([trial(2, 'REQUESTED', 3)], { state: studyState }, { tellBatch: () => batch });
      const { ctx, tasks, logged } = context({ op: 'tell', state: state(5) });
      expect(await advanceIfDue(snap, ctx)).toBe(false);
      expect(tasks).toEqual([]);
      expect(logged).toEqual([]);
      expect(snap.engine).toEqual(state(4));
      expect(snap.changes).toEqual([]);
    }
  });
});

describe('askMore', () => {
  /** A snapshot with room for `room` more trials; add() appends to its trial list as StudySnapshot's does. */
  function asking(opts: { maxTrials: number | null; used: number; generationSize: number; inGeneration: number }) {
    const added: { state: string; clientId: string | null; leaseExpiresAt: string | null; parameters: unknown; generation: number }[] = [];
    const snap = snapshot([], { maxTrials: opts.maxTrials, leaseSeconds: 60, loop: { allowRepeats: true } }, {
      space: null,
      generationSize: opts.generationSize,
      generationTrials: () => Array.from({ length: opts.inGeneration }, (_, i) => ({ trialId: i + 1 })),
      budgetUsed: () => opts.used,
      pending: () => [],
      add: (t: (typeof added)[number], now: string) => (added.push(t), { ...t, createdAt: now }),
    });
    return { snap, added };
  }

  it('asks for the rest of the generation\'s batch, leases the first `need` to the client and leaves the rest REQUESTED', async () => {
    const { snap, added } = asking({ maxTrials: null, used: 0, generationSize: 3, inGeneration: 0 });
    const { ctx, tasks } = context({ op: 'ask', state: state(4), points: [[0.1], [0.2], [0.3]] });
    const got = await askMore(snap, 1, 'w-1', ctx);
    expect((tasks[0] as { count: number }).count).toBe(3);
    expect(got.map((t) => [t.state, t.clientId])).toEqual([['ACTIVE', 'w-1']]);
    expect(added.map((t) => [t.state, t.clientId, t.leaseExpiresAt, t.parameters, t.generation])).toEqual([
      ['ACTIVE', 'w-1', '2026-01-01T00:01:00.000Z', { x: 0.1 }, 4],
      ['REQUESTED', null, null, { x: 0.2 }, 4],
      ['REQUESTED', null, null, { x: 0.3 }, 4],
    ]);
  });

  it('asks the engine for nothing once max_trials is used up, and caps the ask at what is left', async () => {
    const full = asking({ maxTrials: 10, used: 10, generationSize: 3, inGeneration: 0 });
    const a = context({ op: 'ask', state: state(4), points: [[0.1]] });
    expect(await askMore(full.snap, 2, 'w-1', a.ctx)).toEqual([]);
    expect(a.tasks).toEqual([]);
    const over = asking({ maxTrials: 10, used: 11, generationSize: 3, inGeneration: 0 });
    const b = context({ op: 'ask', state: state(4), points: [[0.1]] });
    expect(await askMore(over.snap, 2, 'w-1', b.ctx)).toEqual([]);
    expect(b.tasks).toEqual([]);
    const left = asking({ maxTrials: 10, used: 8, generationSize: 3, inGeneration: 0 });
    const c = context({ op: 'ask', state: state(4), points: [[0.1], [0.2]] });
    expect((await askMore(left.snap, 2, 'w-1', c.ctx)).map((t) => t.state)).toEqual(['ACTIVE', 'ACTIVE']);
    expect((c.tasks[0] as { count: number }).count).toBe(2);
  });
});

describe('the history a call sends', () => {
  const o = (v: number): Observation => ({ x: [v], y: v });
  const log = () => new HistoryLog(Array.from({ length: 10 }, (_, i) => o(i)));

  it('counts a history as its stored part and the request\'s own results', () => {
    expect(historyLength({ log: log(), stored: 7, fresh: [o(20), o(21)] })).toBe(9);
    expect(historyLength(plainHistory([o(1), o(2), o(3)]))).toBe(3);
  });

  it('does not build on a thread said to hold more than this request stored (another request\'s results)', () => {
    const h = log();
    h.held.set(1, 12);
    // nobody else holds the log: everything goes, and the entry beyond `stored` is dropped
    expect(wireHistory({ log: h, stored: 10, fresh: [] })).toMatchObject({ from: 0, length: 10 });
    expect(h.held.has(1)).toBe(false);
    const g = log();
    g.held.set(1, 12);
    g.held.set(2, 7);
    expect(wireHistory({ log: g, stored: 10, fresh: [] })).toMatchObject({ from: 7 });
  });

  it('still builds on a thread exactly MAX_TAIL behind', () => {
    const h = new HistoryLog(Array.from({ length: MAX_TAIL + 10 }, (_, i) => o(i)));
    h.held.set(1, 10);
    expect(wireHistory({ log: h, stored: MAX_TAIL + 10, fresh: [] })).toMatchObject({ from: 10 });
    expect(h.held.get(1)).toBe(10);
  });

  it('a whole history sent after a miss leaves what the threads hold as it was', () => {
    const h = log();
    h.held.set(1, 12);
    h.held.set(2, 7);
    expect(wireHistory({ log: h, stored: 10, fresh: [] }, true)).toMatchObject({ from: 0, length: 10 });
    expect([...h.held]).toEqual([[1, 12], [2, 7]]);
  });

  it('a thread that misses twice is an error, not a loop', async () => {
    const runner: EngineRunner = { run: async () => ({ result: { op: 'history-miss', thread: 3 }, ms: 0 }), close: async () => {} };
    const make = (history: unknown): EngineTask => ({ op: 'tell', method: 'cmaes', state: {} as BaseState, ctx: { batch: [], history: history as Observation[] } });
    await expect(runWithHistory(runner, { tenantId: 't', studyId: 's' }, { log: log(), stored: 10, fresh: [] }, make)).rejects.toThrow('engine thread did not take a whole history in');
  });
});

describe('the loop\'s errors', () => {
  it('name the study, the trial or trials, and carry the API\'s codes', () => {
    const one = new UnknownTrialsError('s-1', [7]);
    expect([one.kind, one.code, one.message]).toEqual(['not_found', 'trial_not_found', 'study "s-1" has no trial 7']);
    expect(new UnknownTrialsError('s-1', [7, 9, 12]).message).toBe('study "s-1" has no trials 7, 9, 12');
    const done = new TrialAlreadyCompletedError(3);
    expect([done.kind, done.code, done.message]).toEqual(['conflict', 'trial_already_completed', 'trial 3 is already COMPLETED with a different value']);
    expect(new TrialAlreadyCompletedError(3, 'as infeasible').message).toBe('trial 3 is already COMPLETED as infeasible');
    const inactive = new TrialNotActiveError(4, 'FAILED', 'no heartbeat for it');
    expect([inactive.kind, inactive.code, inactive.message]).toEqual(['conflict', 'trial_not_active', 'trial 4 is FAILED: no heartbeat for it']);
    const lease = new LeaseNotHeldError(5, 'w-2');
    expect([lease.kind, lease.code, lease.message]).toEqual(['conflict', 'lease_not_held', 'trial 5 is leased to another client than "w-2"']);
    const race = new ConcurrentUpdateError('s-1');
    expect([race.kind, race.code, race.message]).toEqual(['unavailable', 'concurrent_update', 'study "s-1" kept changing while this request was computed; retry']);
  });
});

describe('an infeasible point in an observation body', () => {
  const issues = (observation: object) => {
    const r = ObservationsRequest.safeParse({ observations: [observation] });
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('/'), message: i.message }));
  };

  it('carries no constraint values and no standard error', () => {
    expect(issues({ trial_id: 1, infeasible: true, constraints: [0.5] })).toEqual([{ path: 'observations/0/constraints', message: 'an infeasible point has no constraint values' }]);
    expect(issues({ trial_id: 1, infeasible: true, stderr: 0.1 })).toEqual([{ path: 'observations/0/stderr', message: 'an infeasible point has no value, so no standard error' }]);
    expect(issues({ parameters: { x: 1 }, infeasible: true, constraints: [1], stderr: 0.1 }).map((i) => i.path)).toEqual(['observations/0/constraints', 'observations/0/stderr']);
  });

  it('is one of value, values and infeasible: two of them name the field to leave out', () => {
    expect(issues({ trial_id: 1, value: 1, values: [1, 2] })).toEqual([{ path: 'observations/0/values', message: 'give `value` or `values`, not both' }]);
    expect(issues({ trial_id: 1, value: 1, infeasible: true })).toEqual([{ path: 'observations/0/infeasible', message: 'an infeasible point has no value: leave out `value` and `values`' }]);
  });

  it('alone, or with a null standard error, is a result; constraints and stderr go with a value', () => {
    expect(issues({ trial_id: 1, infeasible: true })).toEqual([]);
    expect(issues({ trial_id: 1, infeasible: true, stderr: null })).toEqual([]);
    expect(issues({ trial_id: 1, infeasible: false, value: 2, constraints: [0.5], stderr: 0.1 })).toEqual([]);
    expect(issues({ trial_id: 1, value: 2, constraints: [-1], stderr: 0.1 })).toEqual([]);
  });
});

describe('the key count of points given by parameters, checked before the schema', () => {
  const tooMany = () => Object.fromEntries(Array.from({ length: LIMITS.parameters + 1 }, (_, i) => [`p${i}`, 0]));
  const thrown = (body: unknown) => {
    try {
      countParameterKeys(body);
      return null;
    } catch (e) {
      return e as ValidationError;
    }
  };

  it('names each point with too many keys, at most MAX_ERRORS of them', () => {
    const one = thrown({ observations: [{ parameters: { a: 1 } }, { parameters: tooMany() }] });
    expect(one).toBeInstanceOf(ValidationError);
    expect(one!.errors.map((e) => e.path)).toEqual(['/observations/1/parameters']);
    const many = thrown({ observations: Array.from({ length: MAX_ERRORS + 5 }, () => ({ parameters: tooMany() })) });
    expect(many!.errors).toHaveLength(MAX_ERRORS);
    expect(many!.errors.at(-1)!.path).toBe(`/observations/${MAX_ERRORS - 1}/parameters`);
  });

  it('looks only at the first MAX_OBSERVATIONS points (the schema refuses a longer batch)', () => {
    const body = { observations: [...Array.from({ length: MAX_OBSERVATIONS }, () => ({ value: 1 })), { parameters: tooMany() }] };
    expect(thrown(body)).toBeNull();
    expect(thrown({ observations: 'none' })).toBeNull();
  });
});
