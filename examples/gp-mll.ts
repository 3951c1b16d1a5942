/**
 * Tune a Gaussian process's hyperparameters by maximising its marginal likelihood (the paper's
 * GPmll task): a constant mean plus an RBF kernel with Gaussian noise, on GPyTorch's regression
 * tutorial data (100 points of sin(2πx) plus noise). The server sees four named hyperparameters in
 * their natural units; the three positive ones are searched on a log scale, with a prior around
 * GPyTorch's defaults (constant 0; noise, outputscale and lengthscale softplus(0) = ln 2) and one
 * unit of standard deviation in ln(value), as the paper's protocol prescribes.
 *
 *   npm run example:gp-mll                   # starts its own server
 *   PROBNES_URL=http://127.0.0.1:8080 npm run example:gp-mll
 *   EXAMPLE_BUDGET=40 EXAMPLE_WORKERS=2 npm run example:gp-mll
 */
import { getBenchmark } from '../src/engine/index.js';
import type { StudySpec } from '../clients/typescript/src/index.js';
import { formatPoint, isMain, runStudyExample } from './lib/server.js';

// The data set, the likelihood and the reference optimum are the engine's GPmll benchmark; its
// objective takes θ = (c, ln(σ² − 1e-4), ln s, ln ℓ) and returns −log p(y | θ) / n.
const task = getBenchmark('gp-mll');

export interface GpHyperparameters {
  /** The constant mean function c. */
  constant_mean: number;
  /** Noise variance above GPyTorch's floor: σ² = 1e-4 + noise (the floor keeps K well conditioned). */
  noise: number;
  /** Kernel output scale s in k(x, x') = s·exp(−(x − x')² / 2ℓ²). */
  outputscale: number;
  /** Kernel lengthscale ℓ. */
  lengthscale: number;
}

/** −log marginal likelihood per data point (GPyTorch's ExactMarginalLogLikelihood, negated). */
export function negLogMarginalLikelihood(h: GpHyperparameters): number {
  return task.f([h.constant_mean, Math.log(h.noise), Math.log(h.outputscale), Math.log(h.lengthscale)]);
}

const softplus0 = Math.LN2; // GPyTorch's default value of a positive hyperparameter (raw value 0)
const [lo, hi] = [task.bounds.lower, task.bounds.upper]; // the benchmark's box, in (c, ln σ², ln s, ln ℓ)

export const spec: StudySpec = {
  name: 'gp-mll',
  direction: 'minimize',
  method: 'prob-cmaes',
  parameters: [
    { name: 'constant_mean', bounds: [lo[0], hi[0]], prior: { mean: 0, std: 1 } },
    // scale "log": bounds in user units, prior of ln(value).
    { name: 'noise', scale: 'log', bounds: [Math.exp(lo[1]), Math.exp(hi[1])], prior: { mean: Math.log(softplus0), std: 1 } },
    { name: 'outputscale', scale: 'log', bounds: [Math.exp(lo[2]), Math.exp(hi[2])], prior: { mean: Math.log(softplus0), std: 1 } },
    { name: 'lengthscale', scale: 'log', bounds: [Math.exp(lo[3]), Math.exp(hi[3])], prior: { mean: Math.log(softplus0), std: 1 } },
  ],
  known_optimum: task.optimum,
  metadata: { example: 'gp-mll' },
};

if (isMain(import.meta.url)) {
  await runStudyExample<GpHyperparameters>({
    spec,
    objective: negLogMarginalLikelihood,
    defaults: { budget: 80, workers: 4 },
    clientIdPrefix: 'gp',
    intro: () => {
      const atDefaults = negLogMarginalLikelihood({ constant_mean: 0, noise: softplus0, outputscale: softplus0, lengthscale: softplus0 });
      return [`at GPyTorch's defaults: −log p(y)/n = ${atDefaults.toFixed(5)}`];
    },
    report: (result) => {
      const best = result.best.observed!;
      return [
        `best value ${best.value.toFixed(5)} at ${formatPoint(best.parameters)}`,
        `reference optimum ${task.optimum.toFixed(5)} (regret ${(best.value - task.optimum).toExponential(2)})`,
        `search mean: ${formatPoint(result.best.estimated.parameters)}`,
      ];
    },
  });
}
