/**
 * The model views' cache (src/domain/studies/model-view-cache.ts, used by model-views.ts): a repeated
 * view is answered without an engine call, identical requests in flight share one computation, a
 * new generation or result computes again, one tenant filling its bound does not evict another's
 * entries, and the byte bounds hold. Engine calls are counted by a runner that wraps the inline one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import { createEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { approxBytes, ModelViewCache, type ModelViewCacheBounds } from '../../src/domain/studies/model-view-cache.js';
import { ModelViews } from '../../src/domain/studies/model-views.js';
import { injectOk, makeTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
/** cmaes (a GP fitted for the view) and prob-cmaes (the method's own GP), a few generations each. */
const ids: Record<string, string> = {};

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(t.app, method, url, payload);

async function generation(id: string) {
  const s = await call('GET', `/v1/studies/${id}/suggestions?count=4&client_id=w`);
  await call('POST', `/v1/studies/${id}/observations`, {
    observations: s.trials.map((tr: { trial_id: number; parameters: { x1: number; x2: number } }) => ({ trial_id: tr.trial_id, value: 5 * (tr.parameters.x1 - 1) ** 2 + 0.1 * tr.parameters.x2 ** 2 })),
  });
}

async function drive(method: string, generations: number, extra: Record<string, unknown> = {}) {
  const study = await call('POST', '/v1/studies', {
    name: `cache-${method}`,
    method,
    batch_size: 4,
    seed: 7,
    parameters: [
      { name: 'x1', type: 'float', bounds: [-3, 3] },
      { name: 'x2', type: 'float', bounds: [-3, 3] },
    ],
    ...extra,
  });
  for (let g = 0; g < generations; g++) await generation(study.id);
  return study.id as string;
}

/** The inline runner, counting model-view calls; while `hold` is set, calls wait for its release. */
function countingRunner() {
  const inner = createEngineRunner(0);
  let release: (() => void) | null = null;
  let gate: Promise<void> | null = null;
  const counter = {
    calls: 0,
    hold() {
      gate = new Promise<void>((r) => (release = r));
    },
    release() {
      release?.();
      gate = null;
    },
  };
  const engine: EngineRunner = {
    async run(task, caller) {
      if (task.op === 'model-view') {
        counter.calls++;
        if (gate) await gate;
      }
      return inner.run(task, caller);
    },
    close: () => inner.close(),
  };
  return { engine, counter };
}

beforeAll(async () => {
  t = await makeTestApp();
  ids.cmaes = await drive('cmaes', 3);
  ids['prob-cmaes'] = await drive('prob-cmaes', 3, { options: { candidates: 64 } });
}, 120_000);
afterAll(async () => {
  await t.app.close();
  await t.storage.close();
});

describe('model views through the cache', () => {
  it.each(['cmaes', 'prob-cmaes'])('%s: a second identical request is answered from the cache, a different query is computed', async (method) => {
    const { engine, counter } = countingRunner();
    const views = new ModelViews({ storage: t.storage, engine });
    const id = ids[method]!;
    const g1 = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 8 });
    const calls = counter.calls;
    expect(calls).toBeGreaterThan(0);
    const g2 = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 8 });
    expect(counter.calls).toBe(calls);
    expect(g2).toEqual(g1);
    // Another n, or x and y swapped, is another answer.
    await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 9 });
    expect(counter.calls).toBe(calls + 1);
    await views.grid(DEFAULT_TENANT, id, { x: 'x2', y: 'x1', n: 8 });
    expect(counter.calls).toBe(calls + 2);

    const i1 = await views.importance(DEFAULT_TENANT, id, {});
    const after = counter.calls;
    expect(await views.importance(DEFAULT_TENANT, id, {})).toEqual(i1);
    expect(counter.calls).toBe(after);
    // An earlier generation is another answer, cached in turn.
    await views.importance(DEFAULT_TENANT, id, { generation: i1.generation - 1 });
    expect(counter.calls).toBe(after + 1);
    await views.importance(DEFAULT_TENANT, id, { generation: i1.generation - 1 });
    expect(counter.calls).toBe(after + 1);
  });

  it('identical concurrent requests compute once and get the same answer', async () => {
    const { engine, counter } = countingRunner();
    const views = new ModelViews({ storage: t.storage, engine });
    counter.hold();
    const first = views.importance(DEFAULT_TENANT, ids['prob-cmaes']!, {});
    const second = views.importance(DEFAULT_TENANT, ids['prob-cmaes']!, {});
    // Both have done their reads and reached the cache before the first computation ends.
    for (let i = 0; i < 50 && views.cache.stats().inflight === 0; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    expect(counter.calls).toBe(1);
    counter.release();
    const [a, b] = await Promise.all([first, second]);
    expect(counter.calls).toBe(1);
    expect(b).toBe(a);
    expect(views.cache.stats().inflight).toBe(0);
  });

  it('a failed computation is not kept: the next request computes again', async () => {
    const { counter, engine } = countingRunner();
    let fail = true;
    const failing: EngineRunner = {
      run: async (task, caller) => {
        if (task.op === 'model-view' && fail) {
          counter.calls++;
          throw new Error('engine down');
        }
        return engine.run(task, caller);
      },
      close: () => engine.close(),
    };
    const views = new ModelViews({ storage: t.storage, engine: failing });
    await expect(views.importance(DEFAULT_TENANT, ids.cmaes!, {})).rejects.toThrow('engine down');
    fail = false;
    await expect(views.importance(DEFAULT_TENANT, ids.cmaes!, {})).resolves.toMatchObject({ source: 'fitted' });
    expect(counter.calls).toBe(2);
  });

  it.each(['cmaes', 'prob-cmaes'])('%s: a new generation (new results, a new engine state) computes again', async (method) => {
    const { engine, counter } = countingRunner();
    const views = new ModelViews({ storage: t.storage, engine });
    const id = await drive(method, 2, method === 'prob-cmaes' ? { options: { candidates: 64 } } : {});
    const before = await views.importance(DEFAULT_TENANT, id, {});
    const grid = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 6 });
    const calls = counter.calls;
    await generation(id);
    const after = await views.importance(DEFAULT_TENANT, id, {});
    expect(after.generation).toBe(before.generation + 1);
    const grid2 = await views.grid(DEFAULT_TENANT, id, { x: 'x1', y: 'x2', n: 6 });
    expect(grid2.points.length).toBeGreaterThan(grid.points.length);
    expect(counter.calls).toBe(calls + 2);
  });

  it('cmaes: a new result within the generation (the fitted GP learns from it) computes again', async () => {
    const { engine, counter } = countingRunner();
    const views = new ModelViews({ storage: t.storage, engine });
    const id = await drive('cmaes', 2);
    const s = await call('GET', `/v1/studies/${id}/suggestions?count=4&client_id=w`);
    const before = await views.importance(DEFAULT_TENANT, id, {});
    const calls = counter.calls;
    await call('POST', `/v1/studies/${id}/observations`, { observations: [{ trial_id: s.trials[0].trial_id, value: 1 }] });
    const after = await views.importance(DEFAULT_TENANT, id, {});
    expect(after.generation).toBe(before.generation);
    expect(after.nPoints).toBe(before.nPoints + 1);
    expect(counter.calls).toBeGreaterThan(calls);
  });

  it('one tenant\'s views cannot evict another\'s', async () => {
    const { engine, counter } = countingRunner();
    const bounds: ModelViewCacheBounds = { perTenantEntries: 3, perTenantBytes: 64 * 1024 * 1024, entries: 8, bytes: 64 * 1024 * 1024 };
    const views = new ModelViews({ storage: t.storage, engine, cache: new ModelViewCache(bounds) });
    // The default tenant's view; the other tenants' traffic is written to the cache directly.
    await views.importance(DEFAULT_TENANT, ids['prob-cmaes']!, {});
    const calls = counter.calls;
    for (const other of ['tenant-a', 'tenant-c', 'tenant-d']) for (let k = 0; k < 20; k++) views.cache.set(other, `${other}-${k}`, { k });
    expect(views.cache.stats().tenants['tenant-d']!.entries).toBe(3);
    await views.importance(DEFAULT_TENANT, ids['prob-cmaes']!, {});
    expect(counter.calls).toBe(calls);
    expect(views.cache.stats().entries).toBeLessThanOrEqual(bounds.entries);
  });
});

describe('ModelViewCache bounds', () => {
  const MB = 1024 * 1024;
  /** A value of about `bytes` by approxBytes: a flat array of numbers. */
  const blob = (bytes: number) => new Array<number>(Math.floor((bytes - 16) / 8)).fill(1);

  it('tenant A filling its bound evicts its own least recently used entries, never tenant B\'s', () => {
    const c = new ModelViewCache({ perTenantEntries: 4, perTenantBytes: 10 * MB, entries: 100, bytes: 100 * MB });
    c.set('b', 'b1', 'kept');
    for (let k = 0; k < 50; k++) c.set('a', `a${k}`, k);
    expect(c.get('b', 'b1')).toBe('kept');
    expect(c.stats().tenants.a!.entries).toBe(4);
    // A's four most recent are the ones kept.
    expect(c.get('a', 'a45')).toBeUndefined();
    expect([46, 47, 48, 49].map((k) => c.get('a', `a${k}`))).toEqual([46, 47, 48, 49]);
  });

  it('over the global count, the tenant holding the most gives up an entry: a small tenant keeps its own', () => {
    const c = new ModelViewCache({ perTenantEntries: 5, perTenantBytes: 10 * MB, entries: 8, bytes: 100 * MB });
    c.set('b', 'b1', 'kept');
    for (const tenant of ['a', 'c', 'd']) for (let k = 0; k < 5; k++) c.set(tenant, `${tenant}${k}`, k);
    expect(c.stats().entries).toBe(8);
    expect(c.get('b', 'b1')).toBe('kept');
    for (const s of Object.values(c.stats().tenants)) expect(s.entries).toBeLessThanOrEqual(5);
  });

  it('the byte bounds hold, per tenant and in all; a value above a bound is not kept; a small tenant keeps its entry', () => {
    const c = new ModelViewCache({ perTenantEntries: 100, perTenantBytes: 1 * MB, entries: 1000, bytes: 2.5 * MB });
    c.set('b', 'b1', blob(100 * 1024));
    for (let k = 0; k < 40; k++) {
      c.set(['a', 'c', 'd'][k % 3]!, `v${k}`, blob(300 * 1024));
      const s = c.stats();
      expect(s.bytes).toBeLessThanOrEqual(2.5 * MB);
      for (const p of Object.values(s.tenants)) expect(p.bytes).toBeLessThanOrEqual(1 * MB);
      expect(s.bytes).toBe(Object.values(s.tenants).reduce((a, p) => a + p.bytes, 0));
    }
    expect(c.stats().bytes).toBeGreaterThan(1.5 * MB);
    expect(c.get('b', 'b1')).toBeDefined();
    c.set('a', 'huge', blob(1.5 * MB));
    expect(c.get('a', 'huge')).toBeUndefined();
    expect(c.stats().bytes).toBeLessThanOrEqual(2.5 * MB);
  });

  it('approxBytes counts a grid-sized answer at 8 bytes a number plus overhead', () => {
    const rows = Array.from({ length: 60 }, () => new Array<number>(60).fill(0.5));
    const b = approxBytes({ mean: rows, std: rows });
    expect(b).toBeGreaterThan(2 * 3600 * 8);
    expect(b).toBeLessThan(2 * 3600 * 8 * 1.2);
  });
});
