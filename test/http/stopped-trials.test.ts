/**
 * A stopped trial through HTTP (ALGORITHM.md §31, results/stopped.ts): the trial keeps what the
 * worker reported (GET trial, the export), while the methods read its value as the worse of it and
 * the median of the results completed before it. Two studies with the same seed take the same
 * points; in the last generation the point farthest from the optimum of f(x, y) = (x − 1)² + (y − 1)²
 * gets a value of −100, below every result, once with `"stopped": true` and once as a finished
 * result. As a finished result it draws the method's estimate toward it (BO: its incumbent is that
 * point); stopped, it does not.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeTestApp } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

type Params = { x: number; y: number };
const f = (p: Params) => (p.x - 1) ** 2 + (p.y - 1) ** 2;
const dist = (a: Params, b: Params) => Math.hypot(a.x - b.x, a.y - b.y);

async function post(url: string, payload: object) {
  const res = await app.inject({ method: 'POST', url, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
}

/** Three generations; returns the stopped trial, its point, the estimate after the last update, and the study. */
async function drive(method: string, batch: number, seed: number, stopped: boolean) {
  const study = await post('/v1/studies', {
    name: 'stopped',
    method,
    batch_size: batch,
    seed,
    parameters: [
      { name: 'x', bounds: [-3, 3] },
      { name: 'y', bounds: [-3, 3] },
    ],
    ...(method.startsWith('prob-') ? { options: { start_phase: 'off' } } : {}),
  });
  const id = study.id as string;
  let last: { trialId: number; at: Params } | null = null;
  for (let g = 0; g < 3; g++) {
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${batch}&client_id=w` });
    expect(res.statusCode, res.body).toBe(200);
    const trials = res.json().trials as { trial_id: number; parameters: Params }[];
    expect(trials).toHaveLength(batch);
    const far = g < 2 ? null : trials.reduce((b, t) => (dist(t.parameters, { x: 1, y: 1 }) > dist(b.parameters, { x: 1, y: 1 }) ? t : b));
    await post(`/v1/studies/${id}/observations`, { observations: trials.filter((t) => t !== far).map((t) => ({ trial_id: t.trial_id, value: f(t.parameters) })) });
    if (far) {
      // Completed last, with the generation's update.
      await post(`/v1/studies/${id}/observations`, { observations: [{ trial_id: far.trial_id, value: -100, ...(stopped ? { stopped: true } : {}) }] });
      last = { trialId: far.trial_id, at: far.parameters };
    }
  }
  const best = await app.inject({ method: 'GET', url: `/v1/studies/${id}/best` });
  expect(best.statusCode, best.body).toBe(200);
  expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json().generation).toBe(3);
  return { id, ...last!, estimated: best.json().estimated.parameters as Params };
}

describe('a stopped trial through HTTP', () => {
  it('keeps what the worker reported in the trial view and the export', async () => {
    const s = await drive('cmaes', 4, 1, true);
    const trial = await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/trials/${s.trialId}` });
    expect(trial.json()).toMatchObject({ state: 'COMPLETED', value: -100, stopped: true, failure_reason: 'stopped_early', loss: -100 });
    const doc = (await app.inject({ method: 'GET', url: `/v1/studies/${s.id}/export` })).json();
    expect(doc.trials.find((t: { trial_id: number }) => t.trial_id === s.trialId)).toMatchObject({ value: -100, failure_reason: 'stopped_early' });
  });

  it.each([
    ['bo', 2],
    ['prob-cmaes', 4],
    ['cmaes', 4],
  ])('%s: the estimate is not drawn toward a stopped point with a low last value', async (method, batch) => {
    let away = 0;
    const seeds = [1, 2, 3];
    for (const seed of seeds) {
      const stopped = await drive(method, batch, seed, true);
      const finished = await drive(method, batch, seed, false);
      // The same seed, the same points up to the last report.
      expect(stopped.at).toEqual(finished.at);
      if (method === 'bo') expect(dist(finished.estimated, finished.at)).toBe(0);
      away += dist(stopped.estimated, stopped.at) - dist(finished.estimated, finished.at);
    }
    // Measured: 3.38 (bo), 0.30 (prob-cmaes), 1.87 (cmaes, which ranks the generation) farther on average.
    expect(away / seeds.length).toBeGreaterThan(0.1);
  });
});
