/**
 * The idle sweep as the app wires it (src/app.ts, CACHE_IDLE_MS as `cacheIdleMs`): started with the
 * app over the study cache, the model views and the reports' fronts, it drops what no request used
 * for the limit (the next request reads or computes it again), and it stops when the app closes.
 * Time is vitest's fake clock (Date and the interval timers); the caches read Date.now.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { injectOk } from '../helpers/app.js';

const IDLE = 60_000;
/** One sweep period for a 60 s limit (idle-sweep.ts: min(limit / 4, 60 s)). */
const PERIOD = 15_000;

afterEach(() => {
  vi.useRealTimers();
});

/** The app over an in-memory database, counting model-view engine calls and reads of completed trials. */
async function counted(cacheIdleMs: number | undefined) {
  const real = SqliteStorage.open(':memory:');
  const counts = { views: 0, completedReads: 0 };
  const storage = new Proxy(real, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop === 'listCompletedTrials') return (id: string) => (counts.completedReads++, target.listCompletedTrials(id));
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Storage;
  const inner = createEngineRunner(0);
  const engine: EngineRunner = {
    run(task, caller) {
      if (task.op === 'model-view') counts.views++;
      return inner.run(task, caller);
    },
    close: () => inner.close(),
  };
  const app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, ...(cacheIdleMs === undefined ? {} : { cacheIdleMs }) }, storage, engine });
  const close = async () => {
    await app.close();
    await inner.close();
    real.close();
  };
  return { app, counts, close };
}

const params = [
  { name: 'x0', type: 'float', bounds: [-3, 3] },
  { name: 'x1', type: 'float', bounds: [-3, 3] },
];

describe('the idle sweep in the app', () => {
  it('drops the study cache, model views and fronts no request used for CACHE_IDLE_MS, and stops with the app', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const timersBefore = vi.getTimerCount();
    const { app, counts, close } = await counted(IDLE);
    try {
      const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(app, method, url, payload);
      const single = await call('POST', '/v1/studies', { name: 'one', method: 'cmaes', batch_size: 4, seed: 7, parameters: params });
      const multi = await call('POST', '/v1/studies', { name: 'two', method: 'random', batch_size: 4, seed: 7, parameters: params, objectives: [{ name: 'a', direction: 'minimize' }, { name: 'b', direction: 'minimize' }] });
      for (let g = 0; g < 3; g++) {
        const s = await call('GET', `/v1/studies/${single.id}/suggestions?count=4&client_id=w`);
        await call('POST', `/v1/studies/${single.id}/observations`, { observations: s.trials.map((t: { trial_id: number; parameters: { x0: number; x1: number } }) => ({ trial_id: t.trial_id, value: (t.parameters.x0 - 1) ** 2 + t.parameters.x1 ** 2 })) });
      }
      const m = await call('GET', `/v1/studies/${multi.id}/suggestions?count=4&client_id=w`);
      await call('POST', `/v1/studies/${multi.id}/observations`, { observations: m.trials.map((t: { trial_id: number }) => ({ trial_id: t.trial_id, values: [t.trial_id, 1 / t.trial_id] })) });

      const studyCacheBytes = async () => Number(/^probnes_study_cache_bytes (\S+)$/m.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)![1]);
      const grid = () => call('GET', `/v1/studies/${single.id}/model/grid?x=x0&y=x1&n=8`);
      const front = () => call('GET', `/v1/studies/${multi.id}/front`);
      await grid();
      await front();
      const warm = { ...counts };
      expect(warm.views).toBeGreaterThan(0);
      expect(await studyCacheBytes()).toBeGreaterThan(0);

      // Within the limit (two sweeps have run): everything is still kept.
      vi.advanceTimersByTime(2 * PERIOD);
      expect(await studyCacheBytes()).toBeGreaterThan(0);
      await grid();
      await front();
      expect(counts).toEqual(warm);

      // Idle past the limit and one more sweep: all of it forgotten, read or computed again on the next request.
      vi.advanceTimersByTime(IDLE + PERIOD);
      expect(await studyCacheBytes()).toBe(0);
      await grid();
      expect(counts.views).toBeGreaterThan(warm.views);
      const reads = counts.completedReads;
      await front();
      expect(counts.completedReads).toBe(reads + 1);
      // The study's loop goes on, from storage.
      const s = await call('GET', `/v1/studies/${single.id}/suggestions?count=4&client_id=w`);
      expect(s.trials).toHaveLength(4);
    } finally {
      const running = vi.getTimerCount();
      await close();
      // The sweep's timer is cleared with the app.
      expect(vi.getTimerCount()).toBeLessThan(running);
      expect(vi.getTimerCount()).toBe(timersBefore);
    }
  });

  it('without cacheIdleMs (or with 0) no sweep runs: entries stay until evicted', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    for (const idle of [undefined, 0]) {
      const before = vi.getTimerCount();
      const { app, counts, close } = await counted(idle);
      try {
        expect(vi.getTimerCount()).toBe(before);
        const multi = await injectOk(app, 'POST', '/v1/studies', { name: 'two', method: 'random', batch_size: 4, seed: 7, parameters: params, objectives: [{ name: 'a', direction: 'minimize' }, { name: 'b', direction: 'minimize' }] });
        await injectOk(app, 'GET', `/v1/studies/${multi.id}/front`);
        const reads = counts.completedReads;
        vi.advanceTimersByTime(10 * IDLE);
        await injectOk(app, 'GET', `/v1/studies/${multi.id}/front`);
        expect(counts.completedReads).toBe(reads);
      } finally {
        await close();
      }
    }
  });
});
