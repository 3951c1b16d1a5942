/**
 * A restart of a converged ProbNES search seen through the API (docs/ALGORITHM.md §33): on the paper protocol's
 * Ackley 2-D (prior N(−1, I)) Powell's start phase converges to the local minimum at (0, −0.95) and the search
 * contracts there; once it has stopped improving it starts again from the prior. GET /distribution then shows
 * the prior again, while GET /best's `estimated` keeps recommending the centre the search had converged to (not
 * the prior mean, which the search has left behind), until the restarted search finds a better value.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ackley } from '../../src/engine/benchmarks/classic.js';
import { loopApp } from '../helpers/loop.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await loopApp());
});
afterEach(async () => {
  await app.close();
});

type Trial = { trial_id: number; parameters: { x1: number; x2: number } };
const f = (p: { x1: number; x2: number }) => ackley([p.x1, p.x2]);

async function get<T>(url: string): Promise<T> {
  const res = await app.inject({ method: 'GET', url });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as T;
}

/** The stall record of the study's newest engine state (its export). */
async function stall(id: string): Promise<{ restarts: number; home: number[] | null; best: number } | undefined> {
  const states = (await get<{ engine_states: { state: { stall?: { restarts: number; home: number[] | null; best: number } } }[] }>(`/v1/studies/${id}/export`)).engine_states;
  return states.at(-1)!.state.stall;
}

describe('a restart through the API (ALGORITHM.md §33)', () => {
  it('GET /distribution shows the prior again, GET /best recommends the converged centre until the restarted search finds better', { timeout: 120_000 }, async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/v1/studies',
      payload: {
        name: 'ackley-trap',
        method: 'prob-cmaes',
        batch_size: 1,
        seed: 0,
        parameters: [
          { name: 'x1', prior: { mean: -1, std: 1 }, bounds: [-32.768, 32.768] },
          { name: 'x2', prior: { mean: -1, std: 1 }, bounds: [-32.768, 32.768] },
        ],
        options: { candidates: 64 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id: string = created.json().id;

    // One trial at a time until the first restart (the trapped search restarts at about evaluation 90 of 153 in
    // the paper protocol; 300 leaves room for the API's differences: the box, no repeats).
    let n = 0;
    let restarted = false;
    let bestBefore = Infinity;
    while (n < 300 && !restarted) {
      const { trials } = await get<{ trials: Trial[] }>(`/v1/studies/${id}/suggestions?count=1&client_id=w`);
      expect(trials).toHaveLength(1);
      const value = f(trials[0]!.parameters);
      const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trials[0]!.trial_id, value }] } });
      expect(res.statusCode, res.body).toBe(200);
      n++;
      const s = await stall(id);
      restarted = (s?.restarts ?? 0) > 0;
      if (!restarted) bestBefore = Math.min(bestBefore, value);
    }
    expect(restarted, `no restart in ${n} evaluations`).toBe(true);
    // The search was trapped: its best before the restart is Ackley's local minimum near (0, −0.95), f ≈ 2.58.
    expect(bestBefore).toBeGreaterThan(2.5);
    expect(bestBefore).toBeLessThan(2.7);

    // The distribution is the prior again: mean (−1, −1) in the parameters' units, variance 1.
    const dist = await get<{ mean: Record<string, number>; covariance: number[][] }>(`/v1/studies/${id}/distribution`);
    expect(dist.mean.x1).toBeCloseTo(-1, 9);
    expect(dist.mean.x2).toBeCloseTo(-1, 9);
    expect(dist.covariance[0]![0]).toBeCloseTo(1, 9);
    expect(dist.covariance[1]![1]).toBeCloseTo(1, 9);

    // /best recommends the centre the search converged to, with the model's prediction there (Ackley's value at
    // the local minimum, not the prior mean's f(−1, −1) ≈ 3.63).
    const best = await get<{ observed: { value: number }; estimated: { parameters: { x1: number; x2: number }; predicted_value: number } }>(`/v1/studies/${id}/best`);
    const home = (await stall(id))!.home!;
    expect(home).not.toBeNull();
    expect(best.estimated.parameters.x1).toBeCloseTo(home[0]! - 1, 6);
    expect(best.estimated.parameters.x2).toBeCloseTo(home[1]! - 1, 6);
    expect(Math.hypot(best.estimated.parameters.x1 - 0, best.estimated.parameters.x2 + 0.95)).toBeLessThan(0.05);
    expect(Math.abs(best.estimated.predicted_value - f(best.estimated.parameters))).toBeLessThan(0.05);
    expect(best.observed.value).toBeCloseTo(bestBefore, 12);
  });
});
