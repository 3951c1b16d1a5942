/**
 * example:latent, the template for latent-space optimisation with a user's own generator: its objective
 * is the latent-space task's (bench/latent/task.ts, checked against TensorFlow.js in
 * test/bench/latent.test.ts) with the sign of a maximisation, its prior is the VAE's latent prior N(0, I),
 * and it runs end to end against a served test app, printing a best value that is the log-probability
 * of its printed point.
 */
import { describe, expect, it } from 'vitest';
import { latentObjective } from '../../bench/latent/task.js';
import { LATENT, latentSpec, logProbability } from '../../examples/latent.js';
import { Rng } from '../../src/engine/random/index.js';
import { runExample, servedTestApp } from './run.js';

describe('example:latent', () => {
  it('maximises log p(c | decoder(z)), the negated objective of bench:latent, over z with prior N(0, I)', () => {
    const rng = Rng.fromSeed(11);
    for (let k = 0; k < 10; k++) {
      const z = Array.from(rng.normals(LATENT.length));
      const p = Object.fromEntries(LATENT.map((name, i) => [name, z[i]!]));
      for (const c of [2, 5]) expect(logProbability(p, c)).toBe(-latentObjective(c, z));
    }
    const spec = latentSpec(5);
    expect(spec.direction).toBe('maximize');
    expect(spec.known_optimum).toBe(0);
    expect(spec.parameters.map((q) => q.name)).toEqual(LATENT);
    expect(spec.parameters.every((q) => 'prior' in q && q.prior && 'mean' in q.prior && q.prior.mean === 0 && q.prior.std === 1)).toBe(true);
  });

  describe('against a served test app', () => {
    const server = servedTestApp();

    it('runs to its budget and prints a best value equal to log p of the printed point', async () => {
      const r = await runExample('examples/latent.ts', { PROBNES_URL: server.url, EXAMPLE_BUDGET: '12', EXAMPLE_WORKERS: '3', LATENT_CLASS: '5' });
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/12 evaluations \(0 failed\)/);
      const m = /best value (-?[\d.]+) \(log p\(5 \| image\), p = ([\d.]+)\) at ([^\n]+)/.exec(r.out);
      expect(m, r.out).not.toBeNull();
      const point = Object.fromEntries(m![3]!.split(', ').map((kv) => kv.split('=')).map(([k, v]) => [k!, Number(v)]));
      expect(Object.keys(point)).toEqual(LATENT);
      // The point is printed to 4 significant digits, so its log-probability matches to that precision.
      expect(logProbability(point, 5)).toBeCloseTo(Number(m![1]), 2);
      expect(r.out).toContain('decoded best image:');
    }, 120_000);
  });
});
