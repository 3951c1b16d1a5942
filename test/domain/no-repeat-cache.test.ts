/**
 * The configuration keys no-repeat.ts checks a new point against come from the per-study cache
 * (study-cache.ts): built once from the completed list, then extended by each commit. Two checks:
 *
 * - the cached set equals the keys of every COMPLETED trial as storage lists them (a full
 *   recomputation, no-repeat.ts's configurationKey over listCompletedTrials) after observations,
 *   failures, external points, a late result, a commit by another writer (a second LoopService on
 *   the same database, as another replica) and a forgotten entry; and it is extended, not rebuilt,
 *   except after those two reloads;
 * - a study driven through the cache hands out exactly the points, and answers exactly the
 *   "converged" decisions, of the same study driven with its cache entry forgotten before every
 *   request (every suggestion then builds the set from the whole list, as the service did before
 *   the cache kept it).
 */
import { describe, expect, it } from 'vitest';
import { LoopService, type Suggestions } from '../../src/domain/loop/loop.js';
import { configurationKey } from '../../src/domain/loop/no-repeat.js';
import { StudyCache, type CompletedPoint } from '../../src/domain/loop/study-cache.js';
import { InlineEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { readStudy } from '../../src/domain/studies/codec.js';
import { searchSpace } from '../../src/domain/studies/transforms.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { makeTestApp } from '../helpers/app.js';

const TENANT = 'default';

/** A study created over HTTP (deterministic ids and seed: makeTestApp), driven by a LoopService of the test's own over the same storage. */
async function setup(body: Record<string, unknown>, opts: { clock?: () => Date } = {}) {
  const storage = SqliteStorage.open(':memory:');
  const { app } = await makeTestApp({ storage });
  const res = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'keys', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  const cache = new StudyCache();
  let tick = 0;
  const now = opts.clock ?? (() => new Date(Date.UTC(2025, 0, 2, 12, 0, 0, tick++)));
  const loop = new LoopService({ storage, runner: new InlineEngineRunner(), now, cache });
  return { storage, app, id, cache, loop };
}

/** The cache's set for the study, and the keys of its COMPLETED trials recomputed from storage. */
async function cachedAndFull(storage: Storage, cache: StudyCache, id: string) {
  const study = readStudy((await storage.getStudy(TENANT, id))!);
  // The cache's own space object (the key set belongs to it).
  const space = cache.space(id, study.createdAt, () => searchSpace(study.parameters, study.prior));
  const of = (p: CompletedPoint) => configurationKey(space, p.parameters);
  const stored = await storage.listCompletedTrials(id);
  const full = new Set(stored.map((t) => configurationKey(space, t.parameters)));
  const list = cache.completed(id, stored.length);
  const cached = list === null ? null : cache.completedKeys(id, list, space, of);
  return { cached: cached === null ? null : [...cached].sort(), full: [...full].sort(), completed: stored.length };
}

describe('no-repeat keys in the per-study cache', () => {
  it('agree with a full recomputation after observations, failures, external points, a late result, another writer and a reload', async () => {
    let t = Date.UTC(2025, 0, 2, 12);
    const { storage, app, id, cache, loop } = await setup(
      { method: 'cmaes', batch_size: 2, seed: 1, lease_seconds: 60, parameters: [{ name: 'k', type: 'int', bounds: [0, 30] }, { name: 'x', type: 'float', bounds: [-2, 2] }] },
      { clock: () => new Date((t += 1)) },
    );
    const check = async (builds: number) => {
      const { cached, full, completed } = await cachedAndFull(storage, cache, id);
      expect(cached, `${completed} completed`).toEqual(full);
      // Extended by each commit: built again only when the list was read again.
      expect(cache.keyBuilds).toBe(builds);
    };
    const value = (p: Record<string, unknown>) => ((p.k as number) - 7) ** 2 + (p.x as number) ** 2;
    const observe = (trials: Suggestions['trials']) => loop.observe(TENANT, id, trials.map((tr) => ({ trial_id: tr.trialId, value: value(tr.parameters) })));

    // The first suggestion builds the set (from nothing completed), observations extend it.
    let s = await loop.suggest(TENANT, id, 2, 'a');
    expect(cache.keyBuilds).toBe(1);
    await observe(s.trials);
    await check(1);

    // A failure: the failed point is not completed (and so not taken); the other one is.
    s = await loop.suggest(TENANT, id, 2, 'a');
    await loop.fail(TENANT, id, s.trials[0]!.trialId, 'crashed', 'a');
    await observe(s.trials.slice(1));
    await check(1);

    // External points (one of them repeating a completed configuration), alone and with a result.
    const done = await storage.listCompletedTrials(id);
    s = await loop.suggest(TENANT, id, 1, 'a');
    await loop.observe(TENANT, id, [
      { parameters: { k: 3, x: 0.5 }, value: 16.25 },
      { parameters: done[0]!.parameters as Record<string, number>, value: 1 },
      { trial_id: s.trials[0]!.trialId, value: value(s.trials[0]!.parameters) },
    ]);
    await check(1);

    // A late result: client b holds an extra point of the generation, its lease runs out, the
    // generation's update goes ahead without it (superseded), and then its result arrives.
    s = await loop.suggest(TENANT, id, 2, 'a');
    const extra = (await loop.suggest(TENANT, id, 1, 'b')).trials[0]!;
    t += 61_000;
    for (const tr of s.trials) await loop.heartbeat(TENANT, id, tr.trialId, 'a');
    await observe(s.trials);
    expect((await storage.getTrial(id, extra.trialId))!.state).toBe('ABANDONED');
    await observe([extra]);
    expect((await storage.getTrial(id, extra.trialId))!).toMatchObject({ state: 'COMPLETED', late: true });
    await check(1);

    // Another writer (the app's own LoopService, as another replica): the next request sees more
    // completed trials than the cache holds, reads the list again, and builds its keys once.
    s = await loop.suggest(TENANT, id, 2, 'a');
    const other = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ parameters: { k: 9, x: -1 }, value: 5 }] } });
    expect(other.statusCode, other.body).toBe(200);
    await observe(s.trials);
    s = await loop.suggest(TENANT, id, 2, 'a');
    expect(cache.keyBuilds).toBe(2);
    await observe(s.trials);
    await check(2);

    // A forgotten entry (eviction, a conflict): rebuilt from the list read again.
    cache.forget(id);
    s = await loop.suggest(TENANT, id, 2, 'a');
    await observe(s.trials);
    await check(3);
    expect((await storage.listCompletedTrials(id)).length).toBeGreaterThan(12);
    await app.close();
  });

  it.each([
    ['cmaes', 2],
    ['random', 1],
    ['prob-cmaes', 3],
  ])('%s hands out the same points and the same "converged" answers as with the set built from the whole list every time', async (method, batch) => {
    // A space of 12 configurations: the no-repeat rule redraws, and ends the study as converged.
    const body = { method, batch_size: batch, seed: 1, parameters: [{ name: 'k', type: 'int', bounds: [0, 5] }, { name: 'c', type: 'categorical', choices: ['a', 'b'] }], ...(method.startsWith('prob-') ? { options: { candidates: 64 } } : {}) };
    const run = async (cold: boolean) => {
      const { app, id, cache, loop } = await setup(body);
      const fresh = () => (cold ? cache.forget(id) : undefined);
      const transcript: unknown[] = [];
      for (let i = 0; i < 40; i++) {
        fresh();
        const s = await loop.suggest(TENANT, id, 2, 'a');
        transcript.push({ reason: s.reason, generation: s.generation, trials: s.trials.map((tr) => [tr.trialId, tr.parameters]) });
        if (s.trials.length === 0) break;
        fresh();
        // Every fifth point fails; every seventh round adds an external point.
        const [first, ...rest] = s.trials;
        if (i % 5 === 4) await loop.fail(TENANT, id, first!.trialId, 'crashed', 'a');
        const results = (i % 5 === 4 ? rest : s.trials).map((tr) => ({ trial_id: tr.trialId, value: ((tr.parameters.k as number) - 2) ** 2 + (tr.parameters.c === 'a' ? 0 : 1) }));
        if (i % 7 === 6) results.push({ parameters: { k: i % 6, c: 'b' }, value: 9 } as never);
        fresh();
        if (results.length > 0) await loop.observe(TENANT, id, results);
      }
      await app.close();
      return { transcript, builds: cache.keyBuilds };
    };
    const warm = await run(false);
    const cold = await run(true);
    expect(warm.transcript).toEqual(cold.transcript);
    // The study ran into the no-repeat rule: the last answer is "converged".
    expect(warm.transcript.at(-1)).toMatchObject({ reason: 'converged', trials: [] });
    // Warm: the set was built once and extended since; cold: built by every suggestion that asked.
    expect(warm.builds).toBe(1);
    expect(cold.builds).toBeGreaterThan(5);
  });
});
