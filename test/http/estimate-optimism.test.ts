/**
 * The estimate's correction for the optimism of a chosen μ (docs/ALGORITHM.md §28) through the API: μ is
 * handed out in user units and its result comes back through the domain, and the engine recognises it as
 * the μ it predicted, so a study builds its residuals and `/best` reports the corrected estimate.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbnesState } from '../../src/engine/strategies/probnes-state.js';
import { probCmaes } from '../../src/engine/strategies/prob-cmaes.js';
import { Rng } from '../../src/engine/random/index.js';
import type { Storage } from '../../src/storage/index.js';
import { loopApp } from '../helpers/loop.js';
import { noisyProblem } from '../../bench/lib/noisy-estimate.js';

let app: FastifyInstance;
let storage: Storage;
afterEach(async () => {
  await app.close();
});

describe('/best on a noisy study', () => {
  it('reports the estimate corrected by the values observed at earlier μ', async () => {
    ({ app, storage } = await loopApp());
    const names = ['a', 'b', 'c', 'd'];
    // A rotated ellipsoid of condition 10³ with noise of 10% of f at the prior mean, the prior N(0.1, 0.3²) per parameter (f in units where the prior is N(0, 2²)).
    const p = noisyProblem('ellipsoid3', 4, 2);
    const f = (q: Record<string, number>) => p.f(names.map((n) => (q[n] - 0.1) / 0.15));
    const sd = 0.1 * Math.abs(p.f([0, 0, 0, 0]));
    const noise = Rng.fromSeed(5);
    const payload = { name: 'noisy', method: 'prob-cmaes', batch_size: 3, seed: 3, options: { candidates: 64 }, parameters: names.map((name) => ({ name, prior: { mean: 0.1, std: 0.3 } })) };
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    let told = 0;
    while (told < 60) {
      const s = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=w` })).json();
      const observations = s.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: f(t.parameters) + sd * noise.normal() }));
      expect((await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } })).statusCode).toBe(200);
      told += observations.length;
    }
    const state = (await storage.getEngineState(id))!.state as unknown as ProbnesState;
    // After the start phase (20 evaluations at d = 4) μ is in every batch: every later generation scored it.
    expect(state.surprises!.length).toBe(5);
    const estimate = probCmaes.estimate!;
    const corrected = estimate(state, []), raw = estimate({ ...state, surprises: [] }, []);
    expect(corrected.predicted).not.toBe(raw.predicted);
    const best = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/best` })).json();
    expect(best.estimated.predicted_value).toBe(corrected.predicted);
    expect(best.estimated.predicted_std).toBe(corrected.predicted_std);
  }, 60_000);
});
