/**
 * XNES and SNES keep their search distribution in a bounded study's box (docs/ALGORITHM.md §6,
 * src/engine/strategies/bounds.ts). Through the API, so that the points are projected onto the
 * bounds exactly as the server evaluates them: on Branin (optimum (9.42, 2.47) near the x1 = 10
 * face) the mean used to walk out of the box, every later point was projected onto the corner
 * (10, 0), and the no-repeat rule then ended the study as "converged" after 96–528 evaluations
 * (before the fix: XNES batch 4 seeds 1, 3, 5–9 and SNES batch 6 seeds 2–4, 6–8 of 1–10).
 */
import { describe, expect, it } from 'vitest';
import { makeTestApp } from '../helpers/app.js';
import { branin, braninStudy } from '../helpers/loop.js';
import { migrateState } from '../../src/engine/strategies/registry.js';
import type { StoredState } from '../../src/engine/strategies/types.js';

const EVALUATIONS = 300;

describe.each([
  ['xnes', 4, [1, 3, 5]],
  ['snes', 6, [2, 3, 4]],
] as const)('%s on Branin, batch %i', (method, batch, seeds) => {
  it.each(seeds)(`seed %i: ${EVALUATIONS} evaluations without an early stop, the mean inside the box after every update`, async (seed) => {
    const { app } = await makeTestApp();
    const id = (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy(method, { batch_size: batch, seed }) })).json().id as string;
    for (let n = 0; n < EVALUATIONS; n += batch) {
      const s = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${batch}` })).json() as { trials: { trial_id: number; parameters: Record<string, number> }[]; reason: string | null };
      expect({ n, handedOut: s.trials.length, reason: s.reason }).toEqual({ n, handedOut: batch, reason: null });
      const observations = s.trials.map((t) => ({ trial_id: t.trial_id, value: branin(t.parameters) }));
      expect((await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } })).statusCode).toBe(200);
      const { mean, std } = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/distribution` })).json() as { mean: Record<string, number>; std: number[] };
      expect(mean.x1, `after ${n + batch}`).toBeGreaterThanOrEqual(-5);
      expect(mean.x1, `after ${n + batch}`).toBeLessThanOrEqual(10);
      expect(mean.x2, `after ${n + batch}`).toBeGreaterThanOrEqual(0);
      expect(mean.x2, `after ${n + batch}`).toBeLessThanOrEqual(15);
      // No marginal spread wider than the box (width 15 in both coordinates).
      for (const s of std) expect(s).toBeLessThanOrEqual(15 * (1 + 1e-12));
    }
  });
});

describe('states written before the box was kept', () => {
  it.each(['xnes', 'snes'] as const)('%s: a version-2 state reads as version 3 without bounds (its study continues as before)', (method) => {
    const v2 = { version: 2, method, dim: 1, batchSize: 2, generation: 0, rng: [1, 2], params: { etaMean: 1, etaCov: 0.5 }, mean: [0], cov: [[1]], diagnostics: { integral_mean: null, integral_std: null, n_active: null }, ...(method === 'xnes' ? { A: [[1]], asked: [] } : { sigma: [1] }) };
    const migrated = migrateState(v2 as unknown as StoredState) as unknown as Record<string, unknown>;
    expect(migrated).toEqual({ ...v2, version: 3, bounds: null });
  });
});
