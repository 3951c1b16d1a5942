/**
 * A study's history sent to the engine as what is new (engine-history.ts, history-store.ts) and
 * kept incrementally by the per-study cache (study-cache.ts):
 *
 * - an engine thread's store trusts only the stored part of what it was sent: the results of a
 *   request whose commit may still fail are replaced by the next call, never relied on;
 * - the store and the cache stay within their byte bounds, least recently used first;
 * - through the loop, with two engine threads taking calls in turn (each its own store, as two
 *   workers), every ask and tell sees exactly the history of the same study driven with its cache
 *   entry forgotten before every request (which sends every history whole, as the service did
 *   before), through late results, external points, another writer's commits (another replica) and
 *   a commit that failed after its update ran; and the calls carry tails, not whole histories.
 */
import { describe, expect, it, vi } from 'vitest';
import { HistoryLog, MAX_TAIL, runWithHistory, wireHistory } from '../../src/domain/loop/engine-history.js';
import { LoopService } from '../../src/domain/loop/loop.js';
import { StudyCache, type CompletedPoint } from '../../src/domain/loop/study-cache.js';
import { configurationKey } from '../../src/domain/loop/no-repeat.js';
import { readStudy } from '../../src/domain/studies/codec.js';
import { ModelHistory, objectiveOf } from '../../src/domain/results/index.js';
import { searchSpace } from '../../src/domain/studies/transforms.js';
import type { EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { runEngineTask, type EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { HISTORY_IDLE_MS, HISTORY_STORE_BYTES, HistoryStore, isHistoryDelta, observationBytes, threadHistory, type HistoryDelta } from '../../src/domain/pool/history-store.js';
import { Rng, getStrategy, resolveOptions, type BaseState, type Observation } from '../../src/engine/index.js';
import { SqliteStorage, type GenerationCommit, type Storage } from '../../src/storage/index.js';
import { makeTestApp } from '../helpers/app.js';

const TENANT = 'default';
const o = (v: number): Observation => ({ x: [v, -v], y: v * v });
const delta = (log: string, from: number, tail: Observation[], stored = from + tail.length): HistoryDelta => ({ log, from, tail, length: from + tail.length, stored });

describe('an engine thread\'s history store', () => {
  it('takes a whole history in, then tails after what it holds', () => {
    const store = new HistoryStore();
    expect(store.resolve(delta('a', 0, [o(1), o(2), o(3)]))).toEqual([o(1), o(2), o(3)]);
    expect(store.resolve(delta('a', 3, [o(4)]))).toEqual([o(1), o(2), o(3), o(4)]);
    // A tail from earlier on replaces what follows it.
    expect(store.resolve(delta('a', 2, [o(5)]))).toEqual([o(1), o(2), o(5)]);
    expect(store.hits).toBe(3);
    expect(store.misses).toBe(0);
  });

  it('answers a miss for a log it does not hold, or holds less of than the call relies on', () => {
    const store = new HistoryStore();
    expect(store.resolve(delta('a', 1, [o(2)]))).toBeNull();
    store.resolve(delta('a', 0, [o(1), o(2)]));
    expect(store.resolve(delta('a', 3, [o(4)]))).toBeNull();
    expect(store.resolve(delta('b', 2, [o(4)]))).toBeNull();
    expect(store.misses).toBe(3);
  });

  it('never relies on a request\'s own results: only what was stored when it was sent', () => {
    const store = new HistoryStore();
    // Three stored results and two of the request's own (its commit then failed).
    expect(store.resolve(delta('a', 0, [o(1), o(2), o(3), o(8), o(9)], 3))).toHaveLength(5);
    expect(store.trusted('a')).toBe(3);
    // A call that would take the unstored two as the log's: a miss, not a history with them.
    expect(store.resolve(delta('a', 5, [o(4)]))).toBeNull();
    // The next request's own results replace them.
    expect(store.resolve(delta('a', 3, [o(4), o(5)]))).toEqual([o(1), o(2), o(3), o(4), o(5)]);
  });

  it('refuses a call whose sizes disagree', () => {
    expect(() => new HistoryStore().resolve({ log: 'a', from: 0, tail: [o(1)], length: 2, stored: 1 })).toThrow(/is not 2/);
    expect(() => new HistoryStore().resolve({ log: 'a', from: 0, tail: [o(1)], length: 1, stored: 2 })).toThrow(/2 stored/);
  });

  it('stays within its byte bound, forgetting the least recently used log; a log over the bound is used, not kept', () => {
    const per = observationBytes(2);
    // A log of 4 observations: their objects and its packed copy (16 rows of 2 coordinates and a value).
    const log4 = 4 * per + 16 * 3 * 8;
    const bound = 2 * log4 + per + 10;
    const store = new HistoryStore(bound);
    store.resolve(delta('a', 0, Array.from({ length: 4 }, (_, i) => o(i))));
    store.resolve(delta('b', 0, Array.from({ length: 4 }, (_, i) => o(i))));
    // a used again: b is now the least recently used.
    store.resolve(delta('a', 4, [o(4)]));
    store.resolve(delta('c', 0, Array.from({ length: 4 }, (_, i) => o(i))));
    expect(store.size.bytes).toBeLessThanOrEqual(bound);
    expect(store.trusted('b')).toBe(0);
    expect(store.trusted('a')).toBe(5);
    expect(store.trusted('c')).toBe(4);
    expect(store.size.bytes).toBe(5 * per + 4 * per + 2 * 16 * 3 * 8);
    expect(store.resolve(delta('d', 0, Array.from({ length: 20 }, (_, i) => o(i))))).toHaveLength(20);
    expect(store.trusted('d')).toBe(0);
    expect(store.size.bytes).toBeLessThanOrEqual(bound);
  });

  it('forgets a log no call has used for HISTORY_IDLE_MS, and keeps one used within it', () => {
    let t = 0;
    const store = new HistoryStore(HISTORY_STORE_BYTES, HISTORY_IDLE_MS, () => t);
    store.resolve(delta('dead', 0, [o(1), o(2)]));
    store.resolve(delta('live', 0, [o(1), o(2)]));
    const held = store.size.bytes;
    t = HISTORY_IDLE_MS - 1;
    store.resolve(delta('live', 2, [o(3)]));
    // Just within the bound both are held: 'dead' was used HISTORY_IDLE_MS − 1 ago.
    expect(store.trusted('dead')).toBe(2);
    t = HISTORY_IDLE_MS + 1;
    // The next call (on any log) forgets what was idle longer; 'live' was used 2 ms ago.
    expect(store.resolve(delta('live', 3, [o(4)]))).toHaveLength(4);
    expect(store.trusted('dead')).toBe(0);
    expect(store.size.bytes).toBe(held - 2 * observationBytes(2) - 16 * 3 * 8 + 2 * observationBytes(2));
    // A call that relies on the forgotten log gets a miss, and the whole history resolves it.
    expect(store.resolve(delta('dead', 2, [o(3)]))).toBeNull();
    expect(store.resolve(delta('dead', 0, [o(1), o(2), o(3)]))).toHaveLength(3);
    // 'live' idle for longer than the bound too: forgotten at the next call, whichever log it names.
    t += HISTORY_IDLE_MS + 1;
    store.resolve(delta('other', 0, [o(1)]));
    expect(store.trusted('live')).toBe(0);
    expect(store.trusted('dead')).toBe(0);
    expect(store.trusted('other')).toBe(1);
  });

  it('keeps each log packed beside it (TellContext.packed): the same points and values, cut and replaced with it', () => {
    const store = new HistoryStore();
    const flat = (h: Observation[]) => ({ x: h.flatMap((p) => p.x), y: h.map((p) => p.y) });
    const same = (r: ReturnType<HistoryStore['resolvePacked']>) => {
      expect(r).not.toBeNull();
      expect({ x: Array.from(r!.packed!.x), y: Array.from(r!.packed!.y) }).toEqual(flat(r!.history));
    };
    const many = Array.from({ length: 40 }, (_, i) => o(i + 1)); // past the first capacity of 16 rows
    same(store.resolvePacked(delta('a', 0, many.slice(0, 10))));
    same(store.resolvePacked(delta('a', 10, many.slice(10, 30))));
    // A tail from earlier on replaces the rows after it, as it replaces the observations.
    const r = store.resolvePacked(delta('a', 25, [o(-7), o(-8)]));
    same(r);
    expect(r!.packed!.y.length).toBe(27);
    expect(r!.packed!.y[25]).toBe(49);
    // Rows of another dimension: no packed copy (the engine then reads the objects), for the rest of that log.
    const odd = store.resolvePacked(delta('b', 0, [o(1), { x: [1, 2, 3], y: 4 }]));
    expect(odd!.packed).toBeNull();
    expect(store.resolvePacked(delta('b', 2, [o(5)]))!.packed).toBeNull();
  });

  it('an update told through the thread\'s store (packed) gives the state it gives told the objects alone', () => {
    const resolvePacked = vi.spyOn(threadHistory, 'resolvePacked');
    const log = `packed-${Math.random()}`;
    const strategy = getStrategy('prob-cmaes');
    const opts = resolveOptions('prob-cmaes', 2, { start_phase: 'off' });
    let state = strategy.init({ dim: 2, batchSize: 3, options: opts, box: null, budget: null }, Rng.fromSeed(3)) as BaseState;
    const f = (x: number[]) => (x[0]! - 0.4) ** 2 + 3 * (x[1]! + 0.2) ** 2;
    const history: Observation[] = [];
    for (let g = 0; g < 12; g++) {
      const a = strategy.ask(state, { history, pending: [] }, 3);
      const batch = a.points.map((x) => ({ x, y: f(x) }));
      const from = history.length;
      history.push(...batch);
      const res = runEngineTask({ op: 'tell', method: 'prob-cmaes', state: a.state as BaseState, ctx: { batch, history: delta(log, from, batch) } });
      const plain = strategy.tell(a.state, { batch, history: history.slice() });
      expect(res.op).toBe('tell');
      expect(res.op === 'tell' ? res.state : null).toEqual(plain);
      // The thread resolved the log with its packed copy, which is what the update then read.
      expect(resolvePacked.mock.results.at(-1)?.value?.packed?.y.length).toBe(history.length);
      state = plain as BaseState;
    }
    resolvePacked.mockRestore();
  });
});

describe('what a call sends', () => {
  const log = () => new HistoryLog(Array.from({ length: 10 }, (_, i) => o(i)));

  it('everything to a log no thread took in; after that, from the least any thread holds', () => {
    const h = log();
    expect(wireHistory({ log: h, stored: 10, fresh: [o(20)] })).toMatchObject({ from: 0, length: 11, stored: 10 });
    h.held.set(1, 8);
    h.held.set(2, 6);
    const w = wireHistory({ log: h, stored: 10, fresh: [o(20)] }) as HistoryDelta;
    expect(w).toMatchObject({ log: h.id, from: 6, length: 11, stored: 10 });
    expect(w.tail).toEqual([o(6), o(7), o(8), o(9), o(20)]);
    expect(wireHistory({ log: h, stored: 10, fresh: [] }, true)).toMatchObject({ from: 0, length: 10 });
  });

  it('does not let a thread that fell more than MAX_TAIL behind hold every call back', () => {
    const h = new HistoryLog(Array.from({ length: MAX_TAIL + 20 }, (_, i) => o(i)));
    h.held.set(1, 5);
    h.held.set(2, MAX_TAIL + 10);
    expect(wireHistory({ log: h, stored: MAX_TAIL + 20, fresh: [] })).toMatchObject({ from: MAX_TAIL + 10 });
    expect([...h.held.keys()]).toEqual([2]);
  });

  it('records what the thread that ran the call holds: the stored part only; sends everything again after a miss', async () => {
    const stores = new Map<number, HistoryStore>([[7, new HistoryStore()]]);
    const sent: HistoryDelta[] = [];
    const runner: EngineRunner = {
      async run(task: EngineTask) {
        if (task.op !== 'tell' || !isHistoryDelta(task.ctx.history)) throw new Error('a tell with a delta expected');
        sent.push(task.ctx.history);
        const history = stores.get(7)!.resolve(task.ctx.history);
        return { result: history ? { op: 'tell', state: task.state, thread: 7 } : { op: 'history-miss', thread: 7 }, ms: 0 };
      },
      async close() {},
    };
    const h = log();
    h.held.set(3, 9); // a thread that does not answer: the call goes to 7, which misses
    const make = (history: HistoryDelta | Observation[]): EngineTask => ({ op: 'tell', method: 'cmaes', state: {} as never, ctx: { batch: [], history } });
    await runWithHistory(runner, { tenantId: 't', studyId: 's' }, { log: h, stored: 10, fresh: [o(30), o(31)] }, make);
    expect(sent.map((d) => d.from)).toEqual([9, 0]);
    expect(h.held.get(7)).toBe(10);
    expect(h.missed.size).toBe(0);
  });

  it('sends everything while a thread that missed has not taken the log in since', () => {
    const h = log();
    h.held.set(1, 8);
    h.missed.add(2);
    expect(wireHistory({ log: h, stored: 10, fresh: [] })).toMatchObject({ from: 0 });
    h.missed.delete(2);
    expect(wireHistory({ log: h, stored: 10, fresh: [] })).toMatchObject({ from: 8 });
  });
});

/** Completed points for the cache tests: trial i completed at second i. */
const point = (i: number, at = i): CompletedPoint => ({ trialId: i, completedAt: new Date(Date.UTC(2025, 0, 1, 0, 0, at)).toISOString(), point: [i, i], value: i, stderr: null, parameters: { x: i, y: i }, stopped: false });
const asObs = () => new ModelHistory(objectiveOf({ direction: 'minimize' }));

describe('the study cache\'s history and bounds', () => {
  it('appends a commit\'s results in place when they come after every stored one; a new log otherwise', () => {
    const cache = new StudyCache();
    cache.setCompleted('s', [point(1), point(2)]);
    const list = cache.completed('s', 2)!;
    const log = cache.history('s', list, asObs)!.log;
    expect(log.obs).toEqual([{ x: [1, 1], y: 1 }, { x: [2, 2], y: 2 }]);
    cache.extendCompleted('s', 2, [point(3)]);
    expect(cache.completed('s', 3)).toBe(list);
    expect(cache.history('s', list, asObs)!.log).toBe(log);
    expect(log.obs.map((x) => x.y)).toEqual([1, 2, 3]);
    // Completed before trial 3 (another replica's clock): the order changes, so a new list and log.
    cache.extendCompleted('s', 3, [point(4, 2.5)]);
    const merged = cache.completed('s', 4)!;
    expect(merged.map((p) => p.trialId)).toEqual([1, 2, 4, 3]);
    const again = cache.history('s', merged, asObs)!.log;
    expect(again.id).not.toBe(log.id);
    expect(again.obs.map((x) => x.y)).toEqual([1, 2, 4, 3]);
    expect(cache.historyBuilds).toBe(2);
  });

  it('forgets the least recently used study when over its byte bound; a list over the bound alone is not kept', () => {
    const many = (n: number, from = 0) => Array.from({ length: n }, (_, i) => point(from + i + 1));
    const one = new StudyCache();
    one.setCompleted('probe', many(100));
    const per = one.size.bytes / 100;
    expect(per).toBeGreaterThan(100);

    const cache = new StudyCache(512, 250 * per);
    cache.setCompleted('a', many(100));
    cache.setCompleted('b', many(100));
    expect(cache.completed('a', 100)).not.toBeNull();
    cache.setEngine('a', 1, { generation: 0 } as never); // a used: b is the least recently used
    cache.setCompleted('c', many(100));
    expect(cache.completed('b', 100)).toBeNull();
    expect(cache.completed('a', 100)).not.toBeNull();
    expect(cache.size.bytes).toBeLessThanOrEqual(250 * per);
    // Keys and histories count too.
    cache.history('c', cache.completed('c', 100)!, asObs);
    expect(cache.size.bytes).toBeGreaterThan(200 * per);
    cache.forget('a');
    cache.forget('c');
    expect(cache.size.bytes).toBe(0);

    cache.setEngine('big', 3, { generation: 2 } as never);
    cache.setCompleted('big', many(300));
    expect(cache.completed('big', 300)).toBeNull();
    expect(cache.engine('big', 3)).not.toBeNull();
    expect(cache.size.bytes).toBe(0);
  });
});

/**
 * Two engine threads, each with its own store, that take calls in turn (the worst case: the call
 * sent again after a miss always goes to the other thread), and record the history each call's
 * engine saw and the tails sent.
 */
class TwoThreads implements EngineRunner {
  private readonly stores = [new HistoryStore(), new HistoryStore()];
  private calls = 0;
  readonly tails: number[] = [];

  /** `seen`: where the calls' histories go (replicas may share one, to record in request order). */
  constructor(readonly seen: { op: string; history: Observation[] }[] = []) {}

  async run(task: EngineTask) {
    const thread = this.calls++ % 2;
    if ((task.op === 'ask' || task.op === 'tell') && isHistoryDelta(task.ctx.history)) {
      const history = this.stores[thread]!.resolve(task.ctx.history);
      if (!history) return { result: { op: 'history-miss' as const, thread: 100 + thread }, ms: 0 };
      this.tails.push(task.ctx.history.tail.length);
      this.seen.push({ op: task.op, history: structuredClone(history) });
      const result = runEngineTask({ ...task, ctx: { ...task.ctx, history } } as EngineTask);
      return { result: { ...result, thread: 100 + thread }, ms: 0 };
    }
    if (task.op === 'ask' || task.op === 'tell') this.seen.push({ op: task.op, history: structuredClone(task.ctx.history as Observation[]) });
    return { result: runEngineTask(task), ms: 0 };
  }
  async close() {}
}

/** A storage whose next commit with an engine state throws after the request computed it (a lost connection, say). */
function failingOnce(storage: Storage): Storage & { failNext: () => void } {
  let fail = false;
  return new Proxy(storage, {
    get(target, key, receiver) {
      if (key === 'failNext') return () => (fail = true);
      if (key === 'commitGeneration') {
        return async (id: string, c: GenerationCommit) => {
          if (fail && c.engineState) {
            fail = false;
            throw new Error('connection lost');
          }
          return target.commitGeneration(id, c);
        };
      }
      const v = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Storage & { failNext: () => void };
}

describe('the history through the loop', () => {
  async function drive(cold: boolean) {
    const base = SqliteStorage.open(':memory:');
    const storage = failingOnce(base);
    const { app } = await makeTestApp({ storage: base });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { name: 'h', method: 'prob-cmaes', batch_size: 3, seed: 1, lease_seconds: 60, parameters: [{ name: 'x', bounds: [-3, 3] }, { name: 'y', bounds: [-3, 3] }], options: { start_phase: 'off' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const cache = new StudyCache();
    let t = Date.UTC(2025, 0, 2, 12);
    const runner = new TwoThreads();
    const loop = new LoopService({ storage, runner, now: () => new Date((t += 1000)), cache });
    const forget = () => (cold ? cache.forget(id) : undefined);
    const f = (p: Record<string, unknown>) => ((p.x as number) - 1) ** 2 + ((p.y as number) + 0.5) ** 2;
    const round = async (client = 'a') => {
      forget();
      const s = await loop.suggest(TENANT, id, 3, client);
      forget();
      await loop.observe(TENANT, id, s.trials.map((tr) => ({ trial_id: tr.trialId, value: f(tr.parameters) })));
    };
    for (let i = 0; i < 4; i++) await round();
    // A generation with a trial stopped early, its last value below every result (results/stopped.ts: read as the median before it).
    forget();
    const st = await loop.suggest(TENANT, id, 3, 'a');
    forget();
    const calls = runner.seen.length;
    await loop.observe(TENANT, id, st.trials.map((tr, k) => (k === 1 ? { trial_id: tr.trialId, value: -1, stopped: true } : { trial_id: tr.trialId, value: f(tr.parameters) })));
    // The generation's update, made in the same request: the stopped result is read against every result before it.
    const told = runner.seen.slice(calls).find((c) => c.op === 'tell')!.history;
    const at = told.findIndex((o) => JSON.stringify(o.x) === JSON.stringify(st.trials[1]!.point));
    expect(at).toBeGreaterThan(10);
    const before = told.slice(0, at).map((o) => o.y).sort((a, b) => a - b);
    const median = before.length % 2 ? before[(before.length - 1) / 2]! : (before[before.length / 2 - 1]! + before[before.length / 2]!) / 2;
    expect(told[at]!.y).toBe(median);
    // An external point, alone.
    forget();
    await loop.observe(TENANT, id, [{ parameters: { x: 0.5, y: 0.5 }, value: 0.5 }]);
    // A late result: b's extra point loses its lease, the generation updates without it, then it arrives.
    forget();
    const s = await loop.suggest(TENANT, id, 3, 'a');
    forget();
    const extra = (await loop.suggest(TENANT, id, 1, 'b')).trials[0]!;
    t += 61_000;
    forget();
    await loop.observe(TENANT, id, s.trials.map((tr) => ({ trial_id: tr.trialId, value: f(tr.parameters) })));
    forget();
    await loop.observe(TENANT, id, [{ trial_id: extra.trialId, value: f(extra.parameters) }]);
    await round();
    // Another writer (the app's own service, as another replica) completes a generation.
    const other = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=r2` });
    const otherTrials = other.json().trials as { trial_id: number; parameters: Record<string, number> }[];
    await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: otherTrials.map((tr) => ({ trial_id: tr.trial_id, value: f(tr.parameters) })) } });
    await round();
    // A commit that fails after its update ran: the update's results were sent to a thread, never stored.
    forget();
    const lost = await loop.suggest(TENANT, id, 3, 'a');
    storage.failNext();
    forget();
    await expect(loop.observe(TENANT, id, lost.trials.map((tr) => ({ trial_id: tr.trialId, value: 100 + f(tr.parameters) })))).rejects.toThrow(/connection lost/);
    forget();
    await loop.observe(TENANT, id, lost.trials.map((tr) => ({ trial_id: tr.trialId, value: f(tr.parameters) })));
    for (let i = 0; i < 3; i++) await round();
    const state = (await storage.getEngineState(id))?.state;
    await app.close();
    return { seen: runner.seen, tails: runner.tails, state, completed: (await base.listCompletedTrials(id)).length };
  }

  it('every ask and tell sees the history of the same study sent whole every time, and calls carry tails', async () => {
    const warm = await drive(false);
    const cold = await drive(true);
    expect(warm.completed).toBeGreaterThan(30);
    expect(warm.seen.map((c) => c.op)).toEqual(cold.seen.map((c) => c.op));
    warm.seen.forEach((c, i) => expect(c.history, `call ${i} (${c.op})`).toEqual(cold.seen[i]!.history));
    // The stopped trial is in every later history, never with its reported −1 (f ≥ 0 elsewhere).
    const last = warm.seen[warm.seen.length - 1]!.history;
    expect(last).toHaveLength(warm.completed);
    expect(last.filter((o) => o.y < 0)).toEqual([]);
    expect(warm.state).toEqual(cold.state);
    // Forgotten before every request, every call carries the whole history; kept, only what is
    // new (a generation's results, the external point, the late one), except a thread's first
    // call on a log (after a miss; a new log after the other writer's commit).
    expect(Math.min(...cold.tails.slice(-4))).toBeGreaterThan(30);
    const whole = warm.tails.filter((n) => n > 8).length;
    expect(whole, `tails ${warm.tails}`).toBeLessThanOrEqual(6);
    expect(warm.tails.slice(-4).every((n) => n <= 8), `tails ${warm.tails}`).toBe(true);
  });
});

describe('two replicas on one database', () => {
  /**
   * Replicas A and B (each its own LoopService, cache and engine threads) take turns on one study;
   * B's clock runs behind A's for a while, so some of B's results are placed before A's latest.
   */
  async function drive(cold: boolean) {
    const storage = SqliteStorage.open(':memory:');
    const { app } = await makeTestApp({ storage });
    const res = await app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: { name: 'r', method: 'prob-cmaes', batch_size: 3, seed: 2, parameters: [{ name: 'k', type: 'int', bounds: [0, 40] }, { name: 'y', bounds: [-3, 3] }], options: { start_phase: 'off' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().id as string;
    const seen: { op: string; history: Observation[] }[] = [];
    let t = Date.UTC(2025, 0, 2, 12);
    let skew = 0;
    const replica = (behind: boolean) => {
      const cache = new StudyCache();
      const loop = new LoopService({ storage, runner: new TwoThreads(seen), now: () => new Date((t += 1000) - (behind ? skew : 0)), cache });
      return { cache, loop };
    };
    const a = replica(false);
    const b = replica(true);
    const f = (p: Record<string, unknown>) => ((p.k as number) - 11) ** 2 / 40 + ((p.y as number) + 0.5) ** 2;
    const round = async (r: typeof a, client: string) => {
      if (cold) r.cache.forget(id);
      const s = await r.loop.suggest(TENANT, id, 3, client);
      if (cold) r.cache.forget(id);
      await r.loop.observe(TENANT, id, s.trials.map((tr) => ({ trial_id: tr.trialId, value: f(tr.parameters) })));
    };
    for (let i = 0; i < 3; i++) await round(a, 'a');
    for (let i = 0; i < 6; i++) await round(i % 2 ? a : b, i % 2 ? 'a' : 'b');
    // B's results now stamped 30 s early: placed before A's latest.
    skew = 30_000;
    await round(b, 'b');
    await round(a, 'a');
    skew = 0;
    for (let i = 0; i < 4; i++) await round(i % 2 ? a : b, i % 2 ? 'a' : 'b');
    const state = (await storage.getEngineState(id))?.state;
    // A's repeat check: its key set against the keys of every stored result.
    const study = readStudy((await storage.getStudy(TENANT, id))!);
    const space = a.cache.space(id, study.createdAt, () => searchSpace(study.parameters, study.prior));
    const stored = await storage.listCompletedTrials(id);
    const list = a.cache.completed(id, stored.length);
    const keys = list && a.cache.completedKeys(id, list, space, (p) => configurationKey(space, p.parameters));
    await app.close();
    return { seen, state, a: a.cache, b: b.cache, keys: keys && [...keys].sort(), full: [...new Set(stored.map((x) => configurationKey(space, x.parameters)))].sort() };
  }

  it('each catches up with the other\'s results by reading only those, and sees the history of a study read whole every time', async () => {
    const warm = await drive(false);
    const cold = await drive(true);
    expect(warm.seen.map((c) => c.op)).toEqual(cold.seen.map((c) => c.op));
    warm.seen.forEach((c, i) => expect(c.history, `call ${i} (${c.op})`).toEqual(cold.seen[i]!.history));
    expect(warm.state).toEqual(cold.state);
    // Caught up with the other's generation each turn; read whole once at the start, and once more
    // each after B's early-stamped results (placed among what they held).
    expect(warm.a.catchUps).toBeGreaterThanOrEqual(4);
    expect(warm.b.catchUps).toBeGreaterThanOrEqual(3);
    expect(warm.a.historyReads).toBeLessThanOrEqual(2);
    expect(warm.b.historyReads).toBeLessThanOrEqual(2);
    // The repeat check's keys include the other replica's results.
    expect(warm.keys).toEqual(warm.full);
  });
});
