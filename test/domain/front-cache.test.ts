/**
 * The front cache of the reports (src/domain/studies/reports.ts, FRONT_CACHE_BOUNDS): a study polled
 * while it grows keeps one entry (its latest version replaces the one before), an unchanged study is
 * answered without reading its trials again, an entry larger than the byte bound is not kept (that
 * study is read on every request, and the others stay), the front history's bytes are counted once
 * it is computed, and one tenant's polls do not evict another's entry.
 *
 * Reads of the trials are counted on storage.listCompletedTrials, the one read the cache saves.
 * Studies are two-objective random studies driven through the API; a second tenant is the same
 * storage seen through getStudy with another owner.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../src/domain/auth/api-keys.js';
import type { ModelViewCacheBounds } from '../../src/domain/studies/model-view-cache.js';
import { FRONT_CACHE_BOUNDS, ReportsService } from '../../src/domain/studies/reports.js';
import type { Storage } from '../../src/storage/index.js';
import { injectOk, makeTestApp, studyBody, type TestApp } from '../helpers/app.js';

let t: TestApp;
let reads: string[];
/** The app's storage, counting reads of completed trials; studies of `other` are the default tenant's. */
let storage: Storage;
const OTHER = 'other-tenant';

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(t.app, method, url, payload);

beforeEach(async () => {
  t = await makeTestApp();
  reads = [];
  const real = t.storage;
  storage = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'listCompletedTrials') return (id: string) => (reads.push(id), real.listCompletedTrials(id));
      if (prop === 'getStudy')
        return async (tenantId: string, id: string) => {
          const rec = await real.getStudy(tenantId === OTHER ? DEFAULT_TENANT : tenantId, id);
          return rec && { ...rec, tenantId };
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
});
afterEach(async () => {
  await t.app.close();
  await t.storage.close();
});

async function study(): Promise<string> {
  const s = await call('POST', '/v1/studies', studyBody({ objectives: [{ name: 'error', direction: 'minimize' }, { name: 'size', direction: 'minimize' }], method: 'random', batch_size: 4, seed: 3 }));
  return s.id as string;
}

/** Completes `n` more trials of the study, with values on a curve (many of them on the front). */
async function grow(id: string, n: number): Promise<void> {
  const s = await call('GET', `/v1/studies/${id}/suggestions?count=${n}&client_id=w`);
  await call('POST', `/v1/studies/${id}/observations`, {
    observations: s.trials.map((tr: { trial_id: number }, i: number) => ({ trial_id: tr.trial_id, values: [tr.trial_id + i / 10, 1 / (tr.trial_id + 1)] })),
  });
}

const reportsWith = (bounds: Partial<ModelViewCacheBounds> = {}) => new ReportsService({ storage, frontCacheBounds: { ...FRONT_CACHE_BOUNDS, ...bounds } });
const readsOf = (id: string) => reads.filter((r) => r === id).length;

describe('the front cache', () => {
  it('keeps one entry per study while it grows, and answers an unchanged study without reading it', async () => {
    const reports = reportsWith();
    const id = await study();
    const sizes: number[] = [];
    for (let round = 0; round < 5; round++) {
      await grow(id, 4);
      const front = await reports.front(DEFAULT_TENANT, id);
      expect(front.evaluationCount).toBe(4 * (round + 1));
      await reports.frontHistory(DEFAULT_TENANT, id);
      await reports.best(DEFAULT_TENANT, id);
      const stats = reports.frontCacheStats();
      // One entry, whatever the number of versions polled; its bytes are this version's.
      expect(stats.entries).toBe(1);
      expect(stats.tenants[DEFAULT_TENANT]).toEqual({ entries: 1, bytes: stats.bytes });
      sizes.push(stats.bytes);
    }
    // Once per version: front, history and /best of one version read the trials once.
    expect(readsOf(id)).toBe(5);
    // Each version holds more results than the one before, and the estimate says so.
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]).toBeGreaterThan(sizes[i - 1]!);
    await reports.front(DEFAULT_TENANT, id);
    await reports.frontHistory(DEFAULT_TENANT, id);
    expect(readsOf(id)).toBe(5);
  });

  it('counts the front history in the entry once it is computed', async () => {
    const reports = reportsWith();
    const id = await study();
    await grow(id, 20);
    await reports.front(DEFAULT_TENANT, id);
    const before = reports.frontCacheStats().bytes;
    const history = await reports.frontHistory(DEFAULT_TENANT, id);
    expect(history.points).toHaveLength(20);
    // 20 points of four numbers: at least 20 · (16 + 8 + 4 · 16) bytes by approxBytes.
    expect(reports.frontCacheStats().bytes - before).toBeGreaterThanOrEqual(20 * 88);
  });

  it('does not keep an entry larger than the byte bound: that study is read on each request, the others stay', async () => {
    const small = await study();
    const large = await study();
    await grow(small, 4);
    await grow(large, 40);
    // The byte bound between the two entries' sizes, measured with bounds that keep both.
    const probe = reportsWith();
    await probe.front(DEFAULT_TENANT, small);
    const smallBytes = probe.frontCacheStats().bytes;
    await probe.front(DEFAULT_TENANT, large);
    const largeBytes = probe.frontCacheStats().bytes - smallBytes;
    expect(largeBytes).toBeGreaterThan(4 * smallBytes);
    reads = [];

    const bound = 2 * smallBytes;
    const reports = reportsWith({ perTenantBytes: bound, bytes: bound });
    for (let i = 0; i < 3; i++) {
      expect((await reports.front(DEFAULT_TENANT, small)).evaluationCount).toBe(4);
      expect((await reports.front(DEFAULT_TENANT, large)).evaluationCount).toBe(40);
      expect(reports.frontCacheStats().bytes).toBeLessThanOrEqual(bound);
    }
    expect(readsOf(small)).toBe(1);
    expect(readsOf(large)).toBe(3);
    expect(reports.frontCacheStats().entries).toBe(1);

    // The whole server's bound holds as well as the tenant's.
    const whole = reportsWith({ bytes: bound });
    await whole.front(DEFAULT_TENANT, large);
    await whole.front(DEFAULT_TENANT, large);
    expect(readsOf(large)).toBe(5);
    expect(whole.frontCacheStats().entries).toBe(0);
  });

  it("one tenant's polls do not evict another tenant's entry", async () => {
    const ids = [await study(), await study(), await study(), await study()];
    for (const id of ids) await grow(id, 4);
    const reports = reportsWith({ entries: 2 });
    await reports.front(DEFAULT_TENANT, ids[0]!);
    // The other tenant polls three studies: over the bound of two in all, it gives up its own oldest.
    for (const id of ids.slice(1)) await reports.front(OTHER, id);
    const stats = reports.frontCacheStats();
    expect(stats.entries).toBe(2);
    expect(stats.tenants[DEFAULT_TENANT]?.entries).toBe(1);
    await reports.front(DEFAULT_TENANT, ids[0]!);
    expect(readsOf(ids[0]!)).toBe(1);
  });
});
