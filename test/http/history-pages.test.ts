/**
 * GET /history in pages and downsampled: the pages put together are the whole history (as
 * regretHistory computes it from the trials, the definition of the unpaged answer), a stride keeps
 * every best-so-far step exactly, generations come in pages of their own, and tokens are checked.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { regretHistory } from '../../src/domain/index.js';
import type { Storage, TrialRecord } from '../../src/storage/index.js';
import { makeTestApp, studyBody } from '../helpers/app.js';
import { commit, createStudy, fakeEngineState, stamp, trialAt, type CreatedStudy } from '../helpers/study-data.js';

let app: FastifyInstance;
let storage: Storage;
afterEach(async () => {
  await app?.close();
});

const I2 = [[1, 0], [0, 1]];
type Ev = { index: number; trial_id: number; value: number; best_so_far: number; regret: number | null };

/** n COMPLETED trials with pseudo-random values (ties included), completed in a shuffled order. */
async function withResults(study: CreatedStudy, n: number) {
  let x = 7;
  const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const times = Array.from({ length: n }, () => stamp());
  const order = times.map((_, i) => i).sort(() => rnd() - 0.5);
  const trials = Array.from({ length: n }, (_, i) =>
    trialAt(study, { x: 0.1, lr: 0.01 }, { state: 'COMPLETED', generation: 0, source: 'suggested', value: Math.floor(rnd() * 40) / 4, completedAt: times[order[i]!]! }),
  );
  await commit(storage, study.id, 0, fakeEngineState(study, 0, [0, 0], I2), trials);
}

async function pages(url: string): Promise<{ evaluations: Ev[]; generations: { generation: number }[]; count: number; pages: number }> {
  const evaluations: Ev[] = [];
  const generations: { generation: number }[] = [];
  let token: string | null = null;
  let n = 0;
  let count = -1;
  do {
    const res: { statusCode: number; body: string; json: () => unknown } = await app.inject({ method: 'GET', url: `${url}${token ? `&page_token=${encodeURIComponent(token)}` : ''}` });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { evaluations: Ev[]; generations: { generation: number }[]; evaluation_count: number; next_page_token: string | null };
    evaluations.push(...body.evaluations);
    generations.push(...body.generations);
    count = body.evaluation_count;
    token = body.next_page_token;
    n++;
  } while (token);
  return { evaluations, generations, count, pages: n };
}

describe('GET /history in pages', () => {
  it('pages of 10 put together are the whole history, the definition computed from the trials', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, known_optimum: 0 }));
    await withResults(study, 47);
    const all = (await storage.listAllTrials(study.id)).filter((t) => t.state === 'COMPLETED');
    const byCompletion = (a: TrialRecord, b: TrialRecord) => (a.completedAt! < b.completedAt! ? -1 : a.completedAt! > b.completedAt! ? 1 : a.trialId - b.trialId);
    const expected = regretHistory([...all].sort(byCompletion), 'minimize', 0).map((e) => ({ index: e.index, trial_id: e.trialId, value: e.value, best_so_far: e.bestSoFar, regret: e.regret }));
    const paged = await pages(`/v1/studies/${study.id}/history?page_size=10`);
    expect(paged.pages).toBe(5);
    expect(paged.count).toBe(47);
    expect(paged.evaluations).toEqual(expected);
    const whole = (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history` })).json();
    expect(whole.next_page_token).toBeNull();
    expect(whole.evaluations).toEqual(expected);
  });

  it('stride: every k-th evaluation, every best-so-far step and the latest; best_so_far and regret exact', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1, known_optimum: -1 }));
    await withResults(study, 60);
    const full = (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history` })).json().evaluations as Ev[];
    const steps = full.filter((e, i) => i === 0 || e.best_so_far < full[i - 1]!.best_so_far);
    expect(steps.length).toBeGreaterThan(2);
    for (const pageSize of [3, 1000]) {
      const sampled = await pages(`/v1/studies/${study.id}/history?stride=7&page_size=${pageSize}`);
      const expected = full.filter((e) => (e.index - 1) % 7 === 0 || steps.includes(e) || e.index === 60);
      expect(sampled.evaluations, `page_size ${pageSize}`).toEqual(expected);
    }
  });

  it('generations come 100 to a page, in order, while the evaluations run out first', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
    await withResults(study, 3);
    for (let g = 1; g <= 130; g++) await commit(storage, study.id, g, fakeEngineState(study, g, [0, 0], I2));
    const first = (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history?page_size=2` })).json();
    expect(first.evaluations).toHaveLength(2);
    expect(first.generations.map((g: { generation: number }) => g.generation)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const all = await pages(`/v1/studies/${study.id}/history?page_size=2`);
    expect(all.evaluations.map((e) => e.index)).toEqual([1, 2, 3]);
    expect(all.generations.map((g) => g.generation)).toEqual(Array.from({ length: 131 }, (_, i) => i));
  });

  it('diagnostics that are not what they claim (an imported state) read as null, never a 500', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
    await commit(storage, study.id, 1, fakeEngineState(study, 1, [0, 0], I2, { integral_mean: 1, integral_std: 0.5, n_active: 1.79e308 }));
    await commit(storage, study.id, 2, fakeEngineState(study, 2, [0, 0], I2, { integral_mean: 1, integral_std: 0.5, n_active: 2.5 }));
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().generations.slice(1).map((g: { n_active: number | null }) => g.n_active)).toEqual([null, null]);
  });

  it('400 for a forged token, a token of another stride, a page_size out of range', async () => {
    ({ app, storage } = await makeTestApp());
    const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
    await withResults(study, 5);
    const token = (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history?page_size=2` })).json().next_page_token as string;
    const bad = async (q: string) => (await app.inject({ method: 'GET', url: `/v1/studies/${study.id}/history?${q}` })).json();
    expect(await bad(`page_token=${token}x`)).toMatchObject({ status: 400, code: 'invalid_page_token' });
    expect(await bad(`stride=2&page_token=${token}`)).toMatchObject({ status: 400, code: 'invalid_page_token' });
    expect(await bad('page_size=0')).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await bad('page_size=10001')).toMatchObject({ status: 400, code: 'validation_failed' });
    expect(await bad('stride=0')).toMatchObject({ status: 400, code: 'validation_failed' });
  });
});
