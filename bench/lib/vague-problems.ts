/**
 * Multimodal problems met with a vague prior, for bench:ablations ("vague"): the situation where the
 * default profile was seen to diverge (its spread re-expanding to the whole box, its mean pinned at a
 * corner or walking into a wrong basin). Our own construction:
 *
 * - `vague-griewank` (8-D): f(x) = Griewank(R(x − s)) = Σ z_i²/4000 − Π cos(z_i/√i) + 1, z = R(x − s),
 *   R a random rotation (engine/benchmarks/ellipsoid.ts's randomRotation, seed 8801) and s a shift
 *   uniform in [−100, 100]^8 (Rng seed 8802); f* = 0 at x = s. Domain [−600, 600]^8 (Griewank's usual
 *   domain), prior N(0, 300² I): all the user knows is the domain, whose faces are 2σ away.
 * - `vague-styblinski-tang` (8-D): f(x) = ½ Σ (x_i⁴ − 16x_i² + 5x_i) − 8·f₁*, with f₁* the 1-D minimum
 *   (so f* = 0 at x_i = −2.9035…); 2⁸ basins, the global one in the negative orthant. Domain [−5, 5]^8,
 *   prior N(0, 2.5² I) (again the faces at 2σ).
 *
 * Points are projected onto the domain (the study's bounds) and every method gets the box, as in
 * bench:bbob. The runs go through the benchmark loop of bench/lib/run.ts.
 */
import { griewank, styblinskiTang, STYBLINSKI_TANG_FSTAR_1D, STYBLINSKI_TANG_XSTAR } from '../../src/engine/benchmarks/classic.js';
import { randomRotation } from '../../src/engine/benchmarks/ellipsoid.js';
import type { Options } from '../../src/engine/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import { runLoop, type RunRecord, type RunSpec } from './run.js';

export interface VagueProblem {
  name: string;
  dim: number;
  f(x: readonly number[]): number;
  optimum: number;
  argmin: number[];
  lower: number;
  upper: number;
  priorMean: number;
  priorStd: number;
}

function griewankProblem(d: number): VagueProblem {
  const R = randomRotation(d, 8801);
  const rng = Rng.fromSeed(8802);
  const s = Array.from({ length: d }, () => -100 + 200 * rng.uniform());
  return {
    name: 'vague-griewank', dim: d, optimum: 0, argmin: s, lower: -600, upper: 600, priorMean: 0, priorStd: 300,
    f: (x) => griewank(R.map((row) => row.reduce((acc, r, j) => acc + r * (x[j] - s[j]), 0))),
  };
}

function styblinskiProblem(d: number): VagueProblem {
  return {
    name: 'vague-styblinski-tang', dim: d, optimum: 0, argmin: Array<number>(d).fill(STYBLINSKI_TANG_XSTAR), lower: -5, upper: 5, priorMean: 0, priorStd: 2.5,
    f: (x) => styblinskiTang(x) - d * STYBLINSKI_TANG_FSTAR_1D,
  };
}

export const VAGUE_PROBLEMS: Readonly<Record<string, (d: number) => VagueProblem>> = {
  'vague-griewank': griewankProblem,
  'vague-styblinski-tang': styblinskiProblem,
};

export const isVagueProblem = (name: string): boolean => name in VAGUE_PROBLEMS;

/** bench:ablations' "vague" problems at their published dimension. */
export const VAGUE_FUNCTIONS = 'vague-griewank:8,vague-styblinski-tang:8';

/** One run on a vague problem: the spec's method, budget, batch, options and seed; the problem's own prior and box. */
export function runVague(spec: Pick<RunSpec, 'method' | 'fn' | 'dim' | 'seed' | 'budget' | 'batch' | 'options'>): RunRecord {
  const p = VAGUE_PROBLEMS[spec.fn](spec.dim);
  const d = spec.dim, m = p.priorMean, s = p.priorStd;
  const project = (x: number[]): number[] => x.map((v) => Math.min(p.upper, Math.max(p.lower, v)));
  const toX = (u: readonly number[]): number[] => project(u.map((v) => m + s * v));
  const toU = (x: readonly number[]): number[] => x.map((v) => (v - m) / s);
  const box = { lower: Array<number>(d).fill((p.lower - m) / s), upper: Array<number>(d).fill((p.upper - m) / s) };
  getStrategy(spec.method); // an unknown method fails here, before the loop
  const result = runLoop(
    { method: spec.method, dim: d, seed: spec.seed, budget: spec.budget, batch: spec.batch, options: spec.options, box },
    (u) => {
      const x = toX(u);
      return { y: p.f(x), told: toU(x) };
    },
    (mean) => p.f(toX(mean)),
  );
  return { method: spec.method, function: spec.fn, dim: d, seed: spec.seed, batch: spec.batch, optimum: p.optimum, ...result };
}

/**
 * bench:ablations' "vague" variants: the default and paper profiles, and the default without each
 * suspect of the divergence (the model's optimum injected into the batch, ALGORITHM.md §24; the
 * model-based mean step, §18; the quadratic mean itself, §14), one at a time.
 */
export const VAGUE_VARIANTS: { label: string; options: Options }[] = [
  { label: 'default', options: {} },
  { label: 'paper', options: { profile: 'paper' } },
  { label: 'no injected optimum', options: { inject_optimum: 'off' } },
  { label: 'natural mean step', options: { mean_step: 'natural' } },
  { label: 'no injected optimum, natural mean step', options: { inject_optimum: 'off', mean_step: 'natural' } },
  { label: 'constant mean', options: { mean_function: 'constant', active_set_floor: false } },
  { label: 'optimum radius 1', options: { optimum_radius: 1 } },
];
