/**
 * Idle expiry of the main thread's caches of study data (CACHE_IDLE_MS): the study cache
 * (src/domain/loop/study-cache.ts), the model views' cache (src/domain/studies/model-view-cache.ts),
 * the reports' fronts and /best predictions (src/domain/studies/reports.ts), and the sweep that asks
 * them to forget (src/domain/common/idle-sweep.ts). With an injected clock: an entry unused for the
 * limit is dropped, one used (read or set) within it is kept, and the sizes they report follow. A
 * request holding what it read across a drop is safe, as across an eviction. The sweep's timer runs
 * every min(limit / 4, 60 s), is unref'd, and stops; 0 starts none.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { idleSweepPeriod, startIdleSweep } from '../../src/domain/common/idle-sweep.js';
import { createEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { StudyCache } from '../../src/domain/loop/study-cache.js';
import { ModelViewCache } from '../../src/domain/studies/model-view-cache.js';
import { ReportsService } from '../../src/domain/studies/reports.js';
import { injectOk, makeTestApp, studyBody } from '../helpers/app.js';
import { of, point, space } from '../helpers/cached-points.js';

const MIN = 60_000;
const IDLE = 10 * MIN;

/** A clock the test moves: ms since an arbitrary origin. */
function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('the study cache forgets idle studies', () => {
  it('drops a study unused for the limit, keeps one read within it, and its bytes go with it', () => {
    const c = clock();
    const cache = new StudyCache(undefined, undefined, c.now);
    cache.setEngine('old', 1, { v: 1 } as never);
    cache.setCompleted('old', [point(1, 10), point(2, 20)]);
    cache.setEngine('read', 1, { v: 1 } as never);
    cache.setCompleted('read', [point(1, 10)]);
    c.advance(IDLE - MIN);
    // A read (not a set) marks the study used: a loop request's load reads before it writes.
    expect(cache.completed('read', 1)).not.toBeNull();
    c.advance(2 * MIN);
    expect(cache.forgetIdle(IDLE)).toBe(1);
    expect(cache.size.studies).toBe(1);
    expect(cache.engineRevision('old')).toBeNull();
    expect(cache.completed('old', 2)).toBeNull();
    expect(cache.completed('read', 1)?.map((p) => p.trialId)).toEqual([1]);
    // One result of one parameter (160 + 8 + 64 bytes) is all that is left.
    expect(cache.size.bytes).toBe(232);
    // Exactly at the limit it stays; past it, it goes.
    c.advance(IDLE);
    expect(cache.forgetIdle(IDLE)).toBe(0);
    c.advance(1);
    expect(cache.forgetIdle(IDLE)).toBe(1);
    expect(cache.size).toEqual({ studies: 0, bytes: 0 });
  });

  it('a request holding the list across the drop is safe, as across an eviction', () => {
    const c = clock();
    const cache = new StudyCache(undefined, undefined, c.now);
    cache.setCompleted('s', [point(1, 10), point(2, 20)]);
    // A request loaded the list and its keys, then waited longer than the limit (an engine call).
    const list = cache.completed('s', 2)!;
    expect(cache.completedKeys('s', list, space, of)).not.toBeNull();
    c.advance(IDLE + 1);
    expect(cache.forgetIdle(IDLE)).toBe(1);
    // What it calls with its list afterwards is not served from (or into) a dropped entry.
    expect(cache.completedKeys('s', list, space, of)).toBeNull();
    expect(cache.history('s', list, () => ({ next: () => null, fork: () => null }) as never)).toBeNull();
    // Its commit: the completed trials are not appended to a list the cache no longer has; the state is kept afresh.
    cache.extendCompleted('s', 2, [point(3, 30)]);
    cache.setEngine('s', 2, { v: 2 } as never);
    expect(cache.completed('s', 3)).toBeNull();
    expect(cache.engine('s', 2)).toEqual({ v: 2 });
    expect(cache.size).toEqual({ studies: 1, bytes: 0 });
    // The study's next request reads the list from storage and caches it again.
    cache.setCompleted('s', [point(1, 10), point(2, 20), point(3, 30)]);
    expect(cache.completed('s', 3)).not.toBeNull();
  });
});

describe('the model views cache forgets idle entries', () => {
  it('drops entries unused for the limit in every tenant, keeps one read within it; a computation under way is kept', async () => {
    const c = clock();
    const cache = new ModelViewCache(undefined, () => 100, c.now);
    cache.set('t1', 'old', 'a');
    cache.set('t1', 'read', 'b');
    cache.set('t2', 'old', 'c');
    c.advance(IDLE - MIN);
    expect(cache.get('t1', 'read')).toBe('b');
    let finish!: (v: string) => void;
    const pending = cache.getOrCompute('t2', 'slow', () => new Promise<string>((r) => (finish = r)));
    c.advance(2 * MIN);
    expect(cache.forgetIdle(IDLE)).toBe(2);
    expect(cache.get('t1', 'old')).toBeUndefined();
    expect(cache.get('t2', 'old')).toBeUndefined();
    expect(cache.get('t1', 'read')).toBe('b');
    expect(cache.stats()).toEqual({ entries: 1, bytes: 100 + 2 * 'read'.length + 64, inflight: 1, tenants: { t1: { entries: 1, bytes: 172 } } });
    // The computation was not an entry; it settles into one as usual.
    finish('d');
    await pending;
    expect(cache.get('t2', 'slow')).toBe('d');
    c.advance(IDLE + 1);
    expect(cache.forgetIdle(IDLE)).toBe(2);
    expect(cache.stats()).toEqual({ entries: 0, bytes: 0, inflight: 0, tenants: {} });
  });
});

describe("the reports' fronts and predictions are forgotten when idle", () => {
  it('an idle front and prediction are dropped (read again after), a recently read front is kept', async () => {
    const t = await makeTestApp();
    const engine = createEngineRunner(0);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const s = await injectOk(t.app, 'POST', '/v1/studies', studyBody({ objectives: [{ name: 'error', direction: 'minimize' }, { name: 'size', direction: 'minimize' }], method: 'random', batch_size: 4, seed: 3 }));
        const sug = await injectOk(t.app, 'GET', `/v1/studies/${s.id}/suggestions?count=4&client_id=w`);
        await injectOk(t.app, 'POST', `/v1/studies/${s.id}/observations`, { observations: sug.trials.map((tr: { trial_id: number }) => ({ trial_id: tr.trial_id, values: [tr.trial_id, 1 / tr.trial_id] })) });
        ids.push(s.id);
      }
      const [idle, read] = ids as [string, string];
      let reads = 0;
      const storage = new Proxy(t.storage, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (prop === 'listCompletedTrials') return (id: string) => (reads++, target.listCompletedTrials(id));
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      let ms = Date.UTC(2025, 0, 2);
      const reports = new ReportsService({ storage, engine, now: () => new Date(ms) });
      await reports.best(DEFAULT_TENANT, idle);
      await reports.front(DEFAULT_TENANT, read);
      expect(reports.frontCacheStats().entries).toBe(2);
      expect(reports.estimateCacheSize).toBe(1);
      expect(reads).toBe(2);
      ms += IDLE - MIN;
      await reports.front(DEFAULT_TENANT, read);
      expect(reads).toBe(2);
      ms += 2 * MIN;
      // The idle study's front and its prediction.
      expect(reports.forgetIdle(IDLE)).toBe(2);
      expect(reports.frontCacheStats().entries).toBe(1);
      expect(reports.estimateCacheSize).toBe(0);
      await reports.front(DEFAULT_TENANT, read);
      expect(reads).toBe(2);
      await reports.front(DEFAULT_TENANT, idle);
      expect(reads).toBe(3);
    } finally {
      await engine.close();
      await t.app.close();
      await t.storage.close();
    }
  });

  it('a prediction read within the limit is kept', async () => {
    const t = await makeTestApp();
    const engine = createEngineRunner(0);
    try {
      const s = await injectOk(t.app, 'POST', '/v1/studies', studyBody({ method: 'random', seed: 3 }));
      let ms = Date.UTC(2025, 0, 2);
      const reports = new ReportsService({ storage: t.storage, engine, now: () => new Date(ms) });
      await reports.best(DEFAULT_TENANT, s.id);
      ms += IDLE - MIN;
      await reports.best(DEFAULT_TENANT, s.id);
      ms += 2 * MIN;
      expect(reports.forgetIdle(IDLE)).toBe(0);
      expect(reports.estimateCacheSize).toBe(1);
    } finally {
      await engine.close();
      await t.app.close();
      await t.storage.close();
    }
  });
});

describe('the idle sweep', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sweeps every min(limit / 4, 60 s), on an unref’d timer, until stopped', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    expect(idleSweepPeriod(IDLE)).toBe(60_000);
    expect(idleSweepPeriod(60_000)).toBe(15_000);
    const calls: number[] = [];
    const sweep = startIdleSweep(60_000, [{ forgetIdle: (ms) => (calls.push(ms), 2) }, { forgetIdle: () => 1 }])!;
    expect(sweep.periodMs).toBe(15_000);
    expect(sweep.timer.hasRef()).toBe(false);
    vi.advanceTimersByTime(14_999);
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(calls).toEqual([60_000]);
    vi.advanceTimersByTime(30_000);
    expect(calls).toHaveLength(3);
    expect(sweep.dropped).toBe(9);
    sweep.stop();
    vi.advanceTimersByTime(60_000);
    expect(calls).toHaveLength(3);
  });

  it('0 starts no sweep', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    expect(startIdleSweep(0, [{ forgetIdle: () => 0 }])).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a running sweep does not keep the process alive', () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const script = "const { startIdleSweep } = await import('./src/domain/common/idle-sweep.ts'); startIdleSweep(600000, []); console.log('started');";
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(r.error).toBeUndefined();
    expect(r.stdout.trim()).toBe('started');
    expect(r.status).toBe(0);
    // Well before the first sweep (60 s) would run.
    expect(Date.now() - t0).toBeLessThan(30_000);
  });
});
