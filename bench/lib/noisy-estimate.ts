/**
 * The calibration of the ProbNES estimate (`/best`'s `estimated`, docs/ALGORITHM.md §28) on noisy problems
 * a user brings: 4-D, an optimum away from the prior mean, rotated and ill-conditioned or Rosenbrock-like,
 * additive Gaussian noise of a fixed standard deviation (a share of |f| at the prior's mean), 80
 * evaluations, the method's defaults (the start phase of §29 included), batch size 3 (the API's default).
 *
 * A run is driven through the strategy contract in-process (the server's loop without the HTTP layer):
 * every generation's points are evaluated with noise and told; at the end the estimate at μ is compared
 * with the noise-free f(μ): z = (f(μ) − predicted)/std, positive when the prediction is optimistic.
 *
 * Problems (x in user units, the prior N(0, PRIOR_STD²·I)); every instance draws, from its seed, an
 * orthogonal R, an optimum x* at 1–2 prior standard deviations from the prior mean in a uniform direction,
 * and an optimal value f* uniform in [−10, 10]:
 * - `sphere`:     f* + ‖x − x*‖²;
 * - `ellipsoid3`: f* + Σ_i 10^{3i/(d−1)} (R(x − x*))_i²  (condition 10³);
 * - `ellipsoid6`: the same with condition 10⁶;
 * - `rosenbrock`: f* + Σ_{i<d−1} 100(z_i² − z_{i+1})² + (z_i − 1)², z = R(x − x*)/PRIOR_STD + 1 (BBOB f9's
 *   rotated Rosenbrock with the optimum at x*, scaled so that its valley spans the prior).
 */
import { Rng } from '../../src/engine/random/index.js';
import { randomRotation } from '../../src/engine/benchmarks/ellipsoid.js';
import { resolveOptions, type Options } from '../../src/engine/index.js';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import { generationSize, type Observation } from '../../src/engine/strategies/types.js';
import type { ProbnesState } from '../../src/engine/strategies/probnes-state.js';
import type { MethodName } from '../../src/engine/strategies/methods.js';

export const PRIOR_STD = 2;
export type ProblemKind = 'sphere' | 'ellipsoid3' | 'ellipsoid6' | 'rosenbrock';
export const PROBLEM_KINDS: readonly ProblemKind[] = ['sphere', 'ellipsoid3', 'ellipsoid6', 'rosenbrock'];

export interface NoisyProblem {
  kind: ProblemKind;
  dim: number;
  /** Noise-free f. */
  f: (x: readonly number[]) => number;
  fOpt: number;
  xOpt: number[];
}

/** One instance of a problem kind, deterministic in (kind, d, seed). */
export function noisyProblem(kind: ProblemKind, d: number, seed: number): NoisyProblem {
  const rng = Rng.fromSeed(1_000_003 * seed + 17 * PROBLEM_KINDS.indexOf(kind) + 7);
  const R = randomRotation(d, 1 + Math.floor(rng.uniform() * 2 ** 30));
  const dir = Array.from(rng.normals(d));
  const nd = Math.hypot(...dir);
  const radius = PRIOR_STD * (1 + rng.uniform());
  const xOpt = dir.map((v) => (radius * v) / nd);
  const fOpt = -10 + 20 * rng.uniform();
  const rot = (x: readonly number[], s: number): number[] => R.map((row) => row.reduce((t, r, k) => t + r * (x[k] - xOpt[k]), 0) / s);
  const cond = kind === 'ellipsoid3' ? 1e3 : kind === 'ellipsoid6' ? 1e6 : 1;
  const w = Array.from({ length: d }, (_, i) => (d === 1 ? 1 : cond ** (i / (d - 1))));
  let f: (x: readonly number[]) => number;
  if (kind === 'rosenbrock') {
    f = (x) => {
      const z = rot(x, PRIOR_STD).map((v) => v + 1);
      let s = 0;
      for (let i = 0; i < d - 1; i++) s += 100 * (z[i] * z[i] - z[i + 1]) ** 2 + (z[i] - 1) ** 2;
      return fOpt + s;
    };
  } else {
    f = (x) => fOpt + rot(x, 1).reduce((s, v, i) => s + w[i] * v * v, 0);
  }
  return { kind, dim: d, f, fOpt, xOpt };
}

export interface EstimateRunSpec {
  kind: ProblemKind;
  dim: number;
  seed: number;
  /** Noise standard deviation as a share of |f| at the prior mean (0.01, 0.1). */
  noise: number;
  budget: number;
  /** Declare the budget as max_trials (sizes the start phase, §29). */
  declare: boolean;
  batch: number;
  method?: MethodName;
  options?: Options;
}

export interface EstimateRun {
  spec: EstimateRunSpec;
  fOpt: number;
  noiseStd: number;
  /** μ in user units, f(μ) noise-free, the estimate. */
  mean: number[];
  trueAtMean: number;
  predicted: number | null;
  predictedStd: number | null;
  /** (f(μ) − predicted)/std. */
  z: number | null;
  state: ProbnesState;
  history: Observation[];
}

/** One seeded run; `history` and the final state are returned so other estimates can be computed offline. */
export function runEstimate(spec: EstimateRunSpec): EstimateRun {
  const d = spec.dim;
  const p = noisyProblem(spec.kind, d, spec.seed);
  const noiseStd = spec.noise * Math.abs(p.f(Array<number>(d).fill(0)));
  const method = spec.method ?? 'prob-cmaes';
  const strategy = getStrategy(method);
  const options = resolveOptions(method, d, spec.options ?? {});
  let state = strategy.init({ dim: d, batchSize: spec.batch, options, budget: spec.declare ? spec.budget : null }, Rng.fromSeed(spec.seed)) as ProbnesState;
  const noise = Rng.fromSeed(99_991 * spec.seed + 3);
  const history: Observation[] = [];
  while (history.length < spec.budget) {
    const count = Math.min(generationSize(state), spec.budget - history.length);
    const asked = strategy.ask(state, { history, pending: [] }, count);
    state = asked.state as ProbnesState;
    // Internal coordinates are x/PRIOR_STD (the prior N(0, PRIOR_STD²I) whitened, ALGORITHM.md §0).
    const batch: Observation[] = asked.points.map((u) => ({ x: u.slice(), y: p.f(u.map((v) => PRIOR_STD * v)) + noiseStd * noise.normal() }));
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] }) as ProbnesState;
  }
  const est = strategy.estimate!(state, history);
  const mean = state.mean.map((v) => PRIOR_STD * v);
  const trueAtMean = p.f(mean);
  const z = est.predicted !== null && est.predicted_std ? (trueAtMean - est.predicted) / est.predicted_std : null;
  return { spec, fOpt: p.fOpt, noiseStd, mean, trueAtMean, predicted: est.predicted, predictedStd: est.predicted_std, z, state, history };
}

export interface CalibrationSummary {
  runs: number;
  /** Share of |z| ≤ 1.96. */
  coverage: number;
  medianZ: number;
  /** Runs whose predicted value is below the true minimum f*. */
  belowMin: number;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[s.length >> 1] : 0.5 * (s[s.length / 2 - 1] + s[s.length / 2]);
}

/** Coverage of predicted ± 1.96·std, the median z and the count below f*, for (predicted, std) pairs. */
export function summarise(rows: readonly { predicted: number; std: number; trueAtMean: number; fOpt: number }[]): CalibrationSummary {
  const zs = rows.map((r) => (r.trueAtMean - r.predicted) / r.std);
  return {
    runs: rows.length,
    coverage: zs.filter((z) => Math.abs(z) <= 1.96).length / Math.max(1, zs.length),
    medianZ: median(zs),
    belowMin: rows.filter((r) => r.predicted < r.fOpt).length,
  };
}
