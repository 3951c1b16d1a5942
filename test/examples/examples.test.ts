/**
 * The examples in examples/: each runs to completion with a small budget and prints its best
 * point, both starting its own server and (PROBNES_URL) against a server it is given; and each
 * example's objective, written in user terms, computes what it says.
 */
import { describe, expect, it } from 'vitest';
import { meanReturn, spec as cartpoleSpec } from '../../examples/cartpole.js';
import { negLogMarginalLikelihood, spec as gpSpec } from '../../examples/gp-mll.js';
import { validationLoss } from '../../examples/mixed-params.js';
import { warmStartTable } from '../../examples/warm-start.js';
import { ProbnesClient } from '../../clients/typescript/src/index.js';
import { numericSpecs } from '../helpers/numeric-specs.js';
import { runExample as spawnExample, servedTestApp } from './run.js';

const BUDGET = 16;

function runExample(file: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return spawnExample(file, { PROBNES_URL: '', EXAMPLE_BUDGET: String(BUDGET), EXAMPLE_WORKERS: '2', ...env });
}

/** The summary every example prints: `N evaluations (F failed)` and `best value V at name=value, …`. */
function summary(out: string): { evaluations: number; failed: number; best: number; point: Record<string, number> } {
  const ev = /(\d+) evaluations \((\d+) failed\)/.exec(out);
  const best = /best value (-?[\d.]+)[^\n]* at ([^\n(]+)/.exec(out);
  expect(ev, out).not.toBeNull();
  expect(best, out).not.toBeNull();
  const point = Object.fromEntries(best![2].trim().split(', ').map((kv) => {
    const [k, v] = kv.split('=');
    return [k, Number(v)];
  }));
  return { evaluations: Number(ev![1]), failed: Number(ev![2]), best: Number(best![1]), point };
}

describe('examples run by one command each', () => {
  it('gp-mll: tunes the four GP hyperparameters and prints a best point no better than the reference optimum', async () => {
    const r = await runExample('examples/gp-mll.ts');
    expect(r.code, r.out).toBe(0);
    const s = summary(r.out);
    expect(s.evaluations + s.failed).toBe(BUDGET);
    expect(Object.keys(s.point)).toEqual(['constant_mean', 'noise', 'outputscale', 'lengthscale']);
    // GP_MLL_FSTAR = −0.124948… (src/engine/benchmarks/gp-mll.ts: multi-start search, cross-checked with scipy).
    expect(s.best).toBeGreaterThanOrEqual(-0.12495);
    // prob-cmaes's default profile evaluates the distribution mean in every batch (include_mean,
    // src/engine/strategies/options.ts) and the first mean is the prior's: GPyTorch's defaults.
    const ln2 = Math.LN2;
    const atDefaults = negLogMarginalLikelihood({ constant_mean: 0, noise: ln2, outputscale: ln2, lengthscale: ln2 });
    expect(r.out).toContain(`at GPyTorch's defaults: −log p(y)/n = ${atDefaults.toFixed(5)}`);
    expect(s.best).toBeLessThanOrEqual(atDefaults + 1e-5); // printed to 5 decimals
  });

  describe('cartpole against a server given by PROBNES_URL', () => {
    const server = servedTestApp();

    it('learns a policy: every reported value is the mean return of its weights, and the printed best is the best of them', async () => {
      const r = await runExample('examples/cartpole.ts', { PROBNES_URL: server.url });
      expect(r.code, r.out).toBe(0);
      const s = summary(r.out);
      expect(s.evaluations).toBe(BUDGET);
      expect(Object.keys(s.point)).toEqual(['w_position', 'w_velocity', 'w_angle', 'w_angular_velocity']);
      const { studies } = (await (await fetch(`${server.url}/v1/studies`)).json()) as { studies: { id: string }[] };
      expect(studies).toHaveLength(1);
      const { trials } = (await (await fetch(`${server.url}/v1/studies/${studies[0]!.id}/trials?state=COMPLETED&page_size=100`)).json()) as { trials: { parameters: Record<string, number>; value: number }[] };
      expect(trials).toHaveLength(BUDGET);
      // The objective the example reports is the simulator's mean return at exactly those weights.
      for (const t of trials) expect(t.value).toBe(meanReturn(t.parameters));
      const best = trials.reduce((a, t) => (t.value > a.value ? t : a));
      expect(s.best).toBe(Number(best.value.toFixed(1)));
      for (const [k, v] of Object.entries(best.parameters)) expect(s.point[k]).toBeCloseTo(v, 3 - Math.floor(Math.log10(Math.abs(v) || 1))); // printed to 4 significant digits
      // Learning: the prior mean, the zero policy, falls within 20 steps; 46% of the prior's policies
      // N(0, 3²I) last longer (2000 draws), so 16 evaluations that all stay at ≤ 20 would be a broken loop.
      expect(s.best).toBeGreaterThan(Math.max(20, meanReturn({ w_position: 0, w_velocity: 0, w_angle: 0, w_angular_velocity: 0 })));
      expect(s.best).toBeLessThanOrEqual(500);
      // The search mean's line prints the mean return of the estimate /best reports.
      const estimated = ((await (await fetch(`${server.url}/v1/studies/${studies[0]!.id}/best`)).json()) as { estimated: { parameters: Record<string, number> } }).estimated.parameters;
      expect(r.out).toContain(`→ mean return ${meanReturn(estimated).toFixed(1)}`);
    });
  });

  describe('mixed-params against a server given by PROBNES_URL', () => {
    const server = servedTestApp();

    it('drives the given server with parallel workers and prints integer batch size and layers', async () => {
      const r = await runExample('examples/mixed-params.ts', { PROBNES_URL: server.url, EXAMPLE_WORKERS: '3' });
      expect(r.code, r.out).toBe(0);
      expect(r.out).toContain(server.url);
      expect(r.out).toMatch(/by trainer-0, trainer-1, trainer-2\n/);
      const s = summary(r.out);
      expect(s.evaluations + s.failed).toBe(BUDGET);
      expect(Number.isInteger(s.point.batch_size) && Number.isInteger(s.point.layers)).toBe(true);
      expect(s.point.learning_rate).toBeGreaterThanOrEqual(1e-5);
      expect(s.point.learning_rate).toBeLessThanOrEqual(1);
      expect(s.best).toBeGreaterThanOrEqual(0.05);
      // The study the example made lives on the given server.
      const list = (await (await fetch(`${server.url}/v1/studies`)).json()) as { studies: { name: string; trial_counts: { COMPLETED: number } }[] };
      expect(list.studies.map((x) => x.name)).toEqual(['mixed-params']);
      expect(list.studies[0].trial_counts.COMPLETED).toBe(s.evaluations);
    });
  });

  describe('warm-start through the TypeScript client', () => {
    const server = servedTestApp();

    it('runs a source study, then cold, warm and warm+observations studies on the moved problem', async () => {
      const client = new ProbnesClient({ baseUrl: server.url });
      const curves = await warmStartTable(client, 1, 24, 6);
      for (const v of ['cold', 'warm', 'warm+observations'] as const) expect(curves[v][0]).toHaveLength(6);
      const studies = (await client.listStudies()).studies;
      expect(studies.map((s) => s.name)).toEqual(['branin-A-0', 'branin-B-cold-0', 'branin-B-warm-0', 'branin-B-warm+observations-0']);
      const [source, cold, warm, withObs] = studies;
      expect(cold!.prior).not.toHaveProperty('source');
      expect(warm!.prior.source).toMatchObject({ from: 'study', study_id: source!.id, points: 3, observations_copied: 0 });
      expect(withObs!.prior.source).toMatchObject({ from: 'study', study_id: source!.id, observations_copied: 24 });
      expect(withObs!.trial_counts.COMPLETED).toBe(24 + 6);
      // The warm prior is centred on the source's best trials, next to the moved optimum (0.36 away),
      // while the cold one starts at the middle of the box: its first generation is already better.
      expect(curves.warm[0]![2]!).toBeLessThan(curves.cold[0]![2]!);
    });
  });

  it('rejects a bad EXAMPLE_BUDGET with a message naming it', async () => {
    const r = await runExample('examples/cartpole.ts', { EXAMPLE_BUDGET: 'ten' });
    expect(r.code).toBe(2);
    expect(r.out).toContain('EXAMPLE_BUDGET must be a positive integer, got "ten"');
  });
});

describe('the examples’ objectives in user terms', () => {
  it('gp-mll maps natural hyperparameters onto the benchmark: the reference optimum and the defaults', () => {
    // GP_MLL_XSTAR = (c, ln(σ² − 1e-4), ln s, ln ℓ) and GP_MLL_FSTAR from src/engine/benchmarks/gp-mll.ts.
    const xstar = [0.13291262516351, -3.3811770215986794, -0.2839531632409806, -1.3812310443883167];
    const h = { constant_mean: xstar[0], noise: Math.exp(xstar[1]), outputscale: Math.exp(xstar[2]), lengthscale: Math.exp(xstar[3]) };
    expect(negLogMarginalLikelihood(h)).toBeCloseTo(-0.12494803429982028, 12);
    // The prior is centred on GPyTorch's defaults, softplus(0) = ln 2, in ln(value) for the positive ones.
    expect(numericSpecs(gpSpec.parameters).map((p) => p.prior?.mean)).toEqual([0, Math.log(Math.LN2), Math.log(Math.LN2), Math.log(Math.LN2)]);
    expect(numericSpecs(gpSpec.parameters).slice(1).every((p) => p.scale === 'log')).toBe(true);
  });

  it('cartpole: the policy (0, 1, 1, 1) balances all 500 steps, the zero policy falls at once (test/engine/benchmarks.test.ts)', () => {
    expect(meanReturn({ w_position: 0, w_velocity: 1, w_angle: 1, w_angular_velocity: 1 })).toBe(500);
    expect(meanReturn({ w_position: 0, w_velocity: 0, w_angle: 0, w_angular_velocity: 0 })).toBeLessThan(20);
    expect(cartpoleSpec.direction).toBe('maximize');
    expect(numericSpecs(cartpoleSpec.parameters).every((p) => p.prior?.mean === 0 && p.prior?.std === 3)).toBe(true);
  });

  it('mixed-params: 0.05 at its stated minimum, more anywhere else nearby, and divergence throws', () => {
    const at = { learning_rate: 10 ** -2.5, batch_size: 64, layers: 3, dropout: 0.2 };
    expect(validationLoss(at)).toBeCloseTo(0.05, 12);
    for (const nudged of [{ ...at, learning_rate: 1e-2 }, { ...at, batch_size: 128 }, { ...at, layers: 4 }, { ...at, dropout: 0.3 }]) {
      expect(validationLoss(nudged)).toBeGreaterThan(0.05);
    }
    expect(() => validationLoss({ ...at, learning_rate: 0.5, batch_size: 32 })).toThrow(/diverged/);
  });
});
