/**
 * The fair scheduler in front of the engine pool: heavy calls are served round robin between
 * tenants, light ones (model-free methods measured fast) never wait behind them, and callers over
 * their bounds are refused at once with engine_busy and a Retry-After. The inner runner here is a
 * stub whose calls finish when the test says so, so every ordering is exact.
 */
import { describe, expect, it } from 'vitest';
import { EngineBusyError, FairScheduler, MEASURED_MAX_ENTRIES, type FairnessLimits } from '../../src/domain/pool/fair-runner.js';
import type { EngineResult, EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { FairEngineRunner, LanedEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';

interface Pending {
  task: EngineTask;
  finish: (ms?: number) => void;
}

/** An inner runner whose calls are held until finish(ms) is called; `started` lists them in start order. */
function heldRunner() {
  const started: Pending[] = [];
  const run = (task: EngineTask) =>
    new Promise<{ result: EngineResult; ms: number }>((resolve) => {
      started.push({ task, finish: (ms = 10) => resolve({ result: { op: 'estimate', estimate: { predicted: null, predicted_std: null } }, ms }) });
    });
  return { run, started };
}

const task = (method: string, tag: number): EngineTask => ({ op: 'estimate', method: method as never, state: { tag } as never, history: [] });
const tagOf = (p: Pending) => (p.task as unknown as { state: { tag: number } }).state.tag;
const limits = (o: Partial<FairnessLimits> = {}): FairnessLimits => ({ heavySlots: 1, lightMs: 50, perStudy: 10, perTenant: 10, maxWaitMs: 1e9, viewSlots: 1, viewsPerTenant: 10, ...o });
/** A model view (the dashboard's importance), tagged like `task`. */
const view = (tag: number): EngineTask => ({ op: 'model-view', task: { view: 'importance', model: { tag } as never, L0: [] } });
const tagOfAny = (p: Pending) => (p.task.op === 'model-view' ? (p.task.task.model as unknown as { tag: number }).tag : tagOf(p));
const tick = () => new Promise((r) => setImmediate(r));

/**
 * The error of a call that must be refused at once (admission throws before anything is queued):
 * settled within one turn of the event loop, or the test fails here, by assertion, instead of
 * waiting forever on a call that a broken bound queued (the held runner never finishes it).
 */
async function refusedAtOnce(call: Promise<unknown>): Promise<unknown> {
  const notYet = Symbol('not settled');
  const outcome = await Promise.race([call.then(() => 'fulfilled', (e: unknown) => e), tick().then(() => notYet)]);
  expect(outcome, 'the call was queued or run instead of being refused at once').not.toBe(notYet);
  expect(outcome, 'the call was run instead of being refused').not.toBe('fulfilled');
  return outcome;
}

describe('FairScheduler', () => {
  it('serves heavy calls round robin between tenants: one tenant with many calls gets every other turn', async () => {
    const inner = heldRunner();
    const s = new FairScheduler(inner.run, limits());
    const done: Promise<unknown>[] = [];
    // Tenant A queues five calls on five studies, then B two, then C one.
    for (let i = 1; i <= 5; i++) done.push(s.run(task('prob-cmaes', 10 + i), { tenantId: 'A', studyId: `a${i}` }));
    for (let i = 1; i <= 2; i++) done.push(s.run(task('bo', 20 + i), { tenantId: 'B', studyId: `b${i}` }));
    done.push(s.run(task('prob-cmaes', 31), { tenantId: 'C', studyId: 'c1' }));
    await tick();
    for (let k = 0; k < 8; k++) {
      expect(inner.started.length).toBe(k + 1); // one slot: one call at a time
      inner.started[k]!.finish();
      await tick();
    }
    await Promise.all(done);
    // A's first call took the free slot at once; then the waiting tenants take turns in the order
    // they began waiting (A, B, C), one call each, until only A has calls left.
    expect(inner.started.map(tagOf)).toEqual([11, 12, 21, 31, 13, 22, 14, 15]);
  });

  it('a light call (model-free method) runs at once while the heavy slot is busy, and turns heavy once measured slow', async () => {
    const inner = heldRunner();
    const s = new FairScheduler(inner.run, limits({ lightMs: 50 }));
    const heavy = s.run(task('prob-cmaes', 1), { tenantId: 'A', studyId: 'a' });
    const queued = s.run(task('prob-cmaes', 2), { tenantId: 'A', studyId: 'a2' });
    const light = s.run(task('cmaes', 3), { tenantId: 'B', studyId: 'b' });
    await tick();
    expect(inner.started.map(tagOf)).toEqual([1, 3]);
    expect(s.stats).toMatchObject({ runningHeavy: 1, runningLight: 1, queuedHeavy: 1 });
    inner.started[1]!.finish(400); // the cmaes call took 400 ms: that study's next one is heavy
    await light;
    const next = s.run(task('cmaes', 4), { tenantId: 'B', studyId: 'b' });
    await tick();
    expect(inner.started.map(tagOf)).toEqual([1, 3]); // waits for the heavy slot now
    inner.started[0]!.finish();
    await heavy;
    await tick();
    // The heavy lane in turn: A's queued call (A began waiting first), then B's.
    expect(inner.started.map(tagOf)).toEqual([1, 3, 2]);
    inner.started[2]!.finish();
    await queued;
    await tick();
    expect(inner.started.map(tagOf)).toEqual([1, 3, 2, 4]);
    inner.started[3]!.finish();
    await next;
  });

  it('light calls run on the light runner when one is given, heavy ones on the inner runner', async () => {
    const heavy = heldRunner();
    const light = heldRunner();
    const s = new FairScheduler(heavy.run, limits(), light.run);
    const h = s.run(task('bo', 1), { tenantId: 'A', studyId: 'a' });
    const l = s.run(task('random', 2), { tenantId: 'A', studyId: 'b' });
    await tick();
    expect(heavy.started.map(tagOf)).toEqual([1]);
    expect(light.started.map(tagOf)).toEqual([2]);
    heavy.started[0]!.finish();
    light.started[0]!.finish();
    await Promise.all([h, l]);
  });

  it('refuses a call over the per-study or per-tenant bound at once, with engine_busy and a Retry-After of at least 1 s', async () => {
    const inner = heldRunner();
    const s = new FairScheduler(inner.run, limits({ perStudy: 1, perTenant: 2 }));
    const first = s.run(task('prob-cmaes', 1), { tenantId: 'A', studyId: 'a' });
    const sameStudy = await refusedAtOnce(s.run(task('prob-cmaes', 2), { tenantId: 'A', studyId: 'a' }));
    expect(sameStudy).toBeInstanceOf(EngineBusyError);
    expect(sameStudy).toMatchObject({ kind: 'busy', code: 'engine_busy' });
    const second = s.run(task('prob-cmaes', 3), { tenantId: 'A', studyId: 'b' });
    const err = await refusedAtOnce(s.run(task('prob-cmaes', 4), { tenantId: 'A', studyId: 'c' }));
    expect(err).toBeInstanceOf(EngineBusyError);
    expect((err as EngineBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((err as Error).message).toMatch(/at most 2/);
    // Another tenant is not affected.
    const other = s.run(task('prob-cmaes', 5), { tenantId: 'B', studyId: 'x' });
    expect(s.stats.rejected).toBe(2);
    await tick();
    for (let k = 0; k < 3; k++) {
      inner.started[k]!.finish();
      await tick();
    }
    await Promise.all([first, second, other]);
    // Bounds are released when calls finish: the study takes a call again.
    const again = s.run(task('prob-cmaes', 6), { tenantId: 'A', studyId: 'a' });
    await tick();
    inner.started[3]!.finish();
    await again;
  });

  it('refuses a heavy call whose predicted wait exceeds maxWaitMs; Retry-After is that wait', async () => {
    const inner = heldRunner();
    const s = new FairScheduler(inner.run, limits({ maxWaitMs: 5000 }));
    // Measure study a's calls at 3 s each.
    const m = s.run(task('prob-cmaes', 1), { tenantId: 'A', studyId: 'a' });
    await tick();
    inner.started[0]!.finish(3000);
    await m;
    const running = s.run(task('prob-cmaes', 2), { tenantId: 'A', studyId: 'a' }); // runs (predicted 3 s)
    const queued = s.run(task('prob-cmaes', 3), { tenantId: 'A', studyId: 'a' }); // waits 3 s: accepted
    // A third would wait for the running one and the queued one: 6 s > 5 s.
    const err = await refusedAtOnce(s.run(task('prob-cmaes', 4), { tenantId: 'A', studyId: 'b' }));
    expect(err).toBeInstanceOf(EngineBusyError);
    expect((err as EngineBusyError).retryAfterSeconds).toBe(6);
    await tick();
    inner.started[1]!.finish(3000);
    await running;
    await tick();
    inner.started[2]!.finish(3000);
    await queued;
  });

  it('a model view never takes the heavy slot: another tenant\'s GP call starts at once while views compute', async () => {
    const heavy = heldRunner();
    const views = heldRunner();
    const s = new FairScheduler(heavy.run, limits(), heavy.run, views.run);
    // Tenant A's two views occupy the views lane (one slot: the second waits); B's GP call and
    // A's own loop call still run at once, one after the other, on the heavy slot.
    const v1 = s.run(view(1), { tenantId: 'A', studyId: 'a' });
    const v2 = s.run(view(2), { tenantId: 'A', studyId: 'a' });
    const b = s.run(task('prob-cmaes', 3), { tenantId: 'B', studyId: 'b' });
    await tick();
    expect(views.started.map(tagOfAny)).toEqual([1]);
    expect(heavy.started.map(tagOfAny)).toEqual([3]);
    expect(s.stats).toMatchObject({ runningViews: 1, queuedViews: 1, runningHeavy: 1, queuedHeavy: 0 });
    heavy.started[0]!.finish();
    await b;
    views.started[0]!.finish();
    await v1;
    await tick();
    expect(views.started.map(tagOfAny)).toEqual([1, 2]);
    views.started[1]!.finish();
    await v2;
  });

  it('serves views round robin between tenants in their own lane', async () => {
    const inner = heldRunner();
    const views = heldRunner();
    const s = new FairScheduler(inner.run, limits(), inner.run, views.run);
    const done: Promise<unknown>[] = [];
    for (let i = 1; i <= 3; i++) done.push(s.run(view(10 + i), { tenantId: 'A', studyId: 'a' }));
    done.push(s.run(view(21), { tenantId: 'B', studyId: 'b' }));
    await tick();
    for (let k = 0; k < 4; k++) {
      expect(views.started.length).toBe(k + 1);
      views.started[k]!.finish();
      await tick();
    }
    await Promise.all(done);
    // A's first view took the free slot; then A and B alternate: B's one view is served second.
    expect(views.started.map(tagOfAny)).toEqual([11, 12, 21, 13]);
    expect(inner.started).toEqual([]);
  });

  it('refuses a tenant\'s views over viewsPerTenant at once (engine_busy, Retry-After ≥ 1 s); its loop calls and other tenants\' views are still taken', async () => {
    const inner = heldRunner();
    const views = heldRunner();
    const s = new FairScheduler(inner.run, limits({ viewsPerTenant: 2, perStudy: 1, perTenant: 1 }), inner.run, views.run);
    const v1 = s.run(view(1), { tenantId: 'A', studyId: 'a' });
    const v2 = s.run(view(2), { tenantId: 'A', studyId: 'a' });
    const err = await refusedAtOnce(s.run(view(3), { tenantId: 'A', studyId: 'a2' }));
    expect(err).toBeInstanceOf(EngineBusyError);
    expect(err).toMatchObject({ code: 'engine_busy' });
    expect((err as EngineBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((err as Error).message).toMatch(/model views.*at most 2/);
    // Views count neither against the tenant's nor the study's loop bounds (1 each here).
    const loop = s.run(task('prob-cmaes', 4), { tenantId: 'A', studyId: 'a' });
    const other = s.run(view(5), { tenantId: 'B', studyId: 'b' });
    expect(s.stats.rejected).toBe(1);
    await tick();
    expect(inner.started.map(tagOfAny)).toEqual([4]);
    inner.started[0]!.finish();
    for (let k = 0; k < 3; k++) {
      views.started[k]!.finish();
      await tick();
    }
    await Promise.all([v1, v2, loop, other]);
    expect(views.started.map(tagOfAny)).toEqual([1, 2, 5]);
    // Released when they finish: A may ask for a view again.
    const again = s.run(view(6), { tenantId: 'A', studyId: 'a' });
    await tick();
    views.started[3]!.finish();
    await again;
  });

  it('refuses a view whose predicted wait in the views lane exceeds maxWaitMs; heavy calls are not counted in it', async () => {
    const inner = heldRunner();
    const views = heldRunner();
    const s = new FairScheduler(inner.run, limits({ maxWaitMs: 5000 }), inner.run, views.run);
    // A long heavy call runs, measured at 60 s: it makes no view wait.
    const m = s.run(task('prob-cmaes', 1), { tenantId: 'B', studyId: 'b' });
    await tick();
    inner.started[0]!.finish(60_000);
    await m;
    const longHeavy = s.run(task('prob-cmaes', 2), { tenantId: 'B', studyId: 'b' });
    // Views of study a measured at 4 s each.
    const first = s.run(view(3), { tenantId: 'A', studyId: 'a' });
    await tick();
    views.started[0]!.finish(4000);
    await first;
    const running = s.run(view(4), { tenantId: 'A', studyId: 'a' }); // runs at once
    const queued = s.run(view(5), { tenantId: 'A', studyId: 'a' }); // waits 4 s: accepted
    const err = await refusedAtOnce(s.run(view(6), { tenantId: 'C', studyId: 'c' })); // would wait 8 s
    expect(err).toBeInstanceOf(EngineBusyError);
    expect((err as EngineBusyError).retryAfterSeconds).toBe(8);
    await tick();
    views.started[1]!.finish(4000);
    await running;
    await tick();
    views.started[2]!.finish(4000);
    await queued;
    inner.started[1]!.finish();
    await longHeavy;
  });

  it('FairEngineRunner over three pools sends views to the views pool, light calls to the light one, the rest to the heavy one', async () => {
    const pools = { heavy: heldRunner(), light: heldRunner(), views: heldRunner() };
    const runner = (h: ReturnType<typeof heldRunner>): EngineRunner => ({ run: h.run, close: async () => {} });
    const fair = new FairEngineRunner(new LanedEngineRunner(runner(pools.heavy), runner(pools.light), runner(pools.views)), limits());
    const calls = [fair.run(view(1), { tenantId: 'A', studyId: 'a' }), fair.run(task('cmaes', 2), { tenantId: 'A', studyId: 'b' }), fair.run(task('bo', 3), { tenantId: 'A', studyId: 'c' })];
    await tick();
    expect(pools.views.started.map(tagOfAny)).toEqual([1]);
    expect(pools.light.started.map(tagOfAny)).toEqual([2]);
    expect(pools.heavy.started.map(tagOfAny)).toEqual([3]);
    for (const p of Object.values(pools)) p.started[0]!.finish();
    await Promise.all(calls);
  });
});

describe('FairScheduler: measured times are bounded', () => {
  /** A runner that answers at once with the given compute time, counting its calls. */
  const instant = (ms: number) => {
    const out = { calls: 0, run: async () => (out.calls++, { result: { op: 'estimate', estimate: { predicted: null, predicted_std: null } } as EngineResult, ms }) };
    return out;
  };

  it('remembers at most MEASURED_MAX_ENTRIES studies × operations however many studies it has run', async () => {
    const s = new FairScheduler(instant(1).run, limits());
    for (let i = 0; i < MEASURED_MAX_ENTRIES + 50; i++) await s.run(task('cmaes', i), { tenantId: 'A', studyId: `s${i}` });
    expect(s.measuredEntries).toBe(MEASURED_MAX_ENTRIES);
  });

  it('forgets the least recently used study first, not the first measured', async () => {
    // Both lanes report 100 ms (above lightMs), so the slow study's measurement stays above it.
    const heavy = instant(100);
    const light = instant(100);
    const s = new FairScheduler(heavy.run, limits(), light.run);
    const slow = { tenantId: 'A', studyId: 'slow' };
    // Measured at 100 ms on the light lane: from then on its calls are heavy.
    await s.run(task('cmaes', 0), slow);
    await s.run(task('cmaes', 0), slow);
    expect(heavy.calls).toBe(1);
    // Used again after the others were measured (its measurement is then the most recent), then more studies than the bound leaves room for.
    for (let i = 0; i < MEASURED_MAX_ENTRIES / 2; i++) await s.run(task('random', i), { tenantId: 'A', studyId: `s${i}` });
    await s.run(task('cmaes', 0), slow);
    expect(heavy.calls).toBe(2);
    for (let i = MEASURED_MAX_ENTRIES / 2; i < MEASURED_MAX_ENTRIES + MEASURED_MAX_ENTRIES / 4; i++) await s.run(task('random', i), { tenantId: 'A', studyId: `s${i}` });
    await s.run(task('cmaes', 0), slow);
    expect(heavy.calls, 'the slow study was forgotten (and its call run as light) although it was used more recently than most').toBe(3);
  });

  it('forgets, with CACHE_IDLE_MS, the studies no call used for the limit: the next call of a forgotten slow study is predicted unmeasured (light)', async () => {
    let t = 1_000_000;
    const heavy = instant(100);
    const light = instant(100);
    const s = new FairScheduler(heavy.run, limits(), light.run, undefined, () => t);
    const slow = { tenantId: 'A', studyId: 'slow' };
    const kept = { tenantId: 'A', studyId: 'kept' };
    // Both measured at 100 ms (above lightMs) on the light lane: their next calls are heavy.
    await s.run(task('cmaes', 0), slow);
    await s.run(task('cmaes', 0), kept);
    t += 50_000;
    await s.run(task('cmaes', 0), kept);
    expect(heavy.calls).toBe(1);
    t += 20_000;
    // 70 s since slow's call, 20 s since kept's: a 60 s limit forgets slow only.
    expect(s.forgetIdle(60_000)).toBe(1);
    expect(s.measuredEntries).toBe(1);
    await s.run(task('cmaes', 0), kept);
    expect(heavy.calls, 'kept is still measured slow').toBe(2);
    await s.run(task('cmaes', 0), slow);
    expect(heavy.calls, 'slow was forgotten: its call is predicted as an unmeasured light one').toBe(2);
    expect(light.calls).toBe(3);
    // Nothing idle left: a second sweep drops nothing.
    expect(s.forgetIdle(60_000)).toBe(0);
  });
});
