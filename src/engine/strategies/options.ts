/**
 * Per-method study options: names, kinds, ranges and defaults, as plain data.
 *
 * This is the single description of what each method accepts. The HTTP layer builds its zod
 * schemas from it (unknown options are rejected there), and `resolveOptions` fills in defaults,
 * which for the ProbNES methods depend on `profile` (ALGORITHM.md §1 "Two profiles", §4, §5).
 */
import { METHOD_NAMES, type MethodName } from './names.js';

export type OptionSpec =
  | { kind: 'number'; min: number; max: number; exclusiveMin?: boolean; integer?: boolean; description: string }
  | { kind: 'enum'; values: readonly string[]; description: string }
  | { kind: 'boolean'; description: string };

export type OptionValue = number | string | boolean;
export type Options = Record<string, OptionValue>;

const profile: OptionSpec = { kind: 'enum', values: ['default', 'paper'], description: '`default` (ours: warm-started GP fit, distribution mean inside each batch, natural SNES form) or `paper` (the published algorithm).' };
const etaMean: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_μ, step size of the mean update.' };
const etaCov: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_Σ, step size of the covariance update.' };

const probCommon: Record<string, OptionSpec> = {
  profile,
  learning_rate_mean: etaMean,
  learning_rate_cov: etaCov,
  gradient: { kind: 'enum', values: ['expected', 'sampled'], description: 'BQ expected gradient (closed form) or a gradient sampled from the GP posterior (ablation).' },
  gradient_samples: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Points drawn from ν for the sampled gradient.' },
  acquisition: { kind: 'enum', values: ['batch-bq', 'none'], description: 'Batch Bayesian-quadrature variance reduction, or plain samples from ν.' },
  candidates: { kind: 'number', min: 1, max: 100_000, integer: true, description: 'Candidate batches drawn from ν for batch BQ.' },
  active_set: { kind: 'boolean', description: 'Fit the GP on the points inside the χ² ellipsoid of ν only (true) or on all points (false).' },
  active_set_quantile: { kind: 'number', min: 0.5, max: 1, exclusiveMin: true, description: 'χ²_d quantile that bounds the active set (squared Mahalanobis distance).' },
  include_mean: { kind: 'boolean', description: 'Evaluate the distribution mean μ as one point of every batch.' },
  gp_warm_start: { kind: 'boolean', description: 'Also start the GP fit from the previous generation\'s MAP hyperparameters and keep the better.' },
  gp_restarts: { kind: 'number', min: 0, max: 20, integer: true, description: 'Extra GP fit restarts from prior draws (beyond the default and warm starts).' },
};

export const OPTION_SPECS: Record<MethodName, Record<string, OptionSpec>> = {
  'prob-cmaes': { ...probCommon },
  'prob-xnes': { ...probCommon },
  'prob-snes': { ...probCommon, snes_form: { kind: 'enum', values: ['reference', 'natural'], description: 'SNES variance update: the reference form (σ⁴ factor) or the natural form.' } },
  cmaes: {
    sigma0: { kind: 'number', min: 0, max: 1e3, exclusiveMin: true, description: 'Initial step size σ₀ in whitened units (the prior has unit scale).' },
    active: { kind: 'boolean', description: 'Active CMA: negative weights for the worst samples in the rank-μ update.' },
  },
  xnes: { learning_rate_mean: etaMean, learning_rate_cov: etaCov },
  snes: { learning_rate_mean: etaMean, learning_rate_cov: etaCov },
  bo: {
    candidates: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Random candidates scored by the acquisition before local refinement.' },
    mc_samples: { kind: 'number', min: 16, max: 4096, integer: true, description: 'Monte Carlo samples for batch expected improvement (q-EI).' },
    box_std: { kind: 'number', min: 0, max: 20, exclusiveMin: true, description: 'Half-width of the search box in prior standard deviations when a parameter has no bounds.' },
  },
  pibo: {
    candidates: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Random candidates scored by the acquisition before local refinement.' },
    mc_samples: { kind: 'number', min: 16, max: 4096, integer: true, description: 'Monte Carlo samples for batch expected improvement (q-EI).' },
    box_std: { kind: 'number', min: 0, max: 20, exclusiveMin: true, description: 'Half-width of the search box in prior standard deviations when a parameter has no bounds.' },
    beta: { kind: 'number', min: 0, max: 1e3, description: 'πBO prior weight β in EI(x)·π(x)^{β/n}.' },
  },
  random: {},
};

/** Defaults; for the ProbNES methods they depend on the profile (ALGORITHM.md §1, §4, §5). */
export function defaultOptions(method: MethodName, d: number, profileName: string = 'default'): Options {
  const paper = profileName === 'paper';
  switch (method) {
    case 'prob-cmaes':
    case 'prob-xnes':
    case 'prob-snes': {
      const base: Options = {
        profile: paper ? 'paper' : 'default',
        learning_rate_mean: 1,
        learning_rate_cov: method === 'prob-snes' ? 1 : 0.5,
        gradient: 'expected',
        gradient_samples: 1000,
        acquisition: 'batch-bq',
        candidates: 1000,
        active_set: true,
        active_set_quantile: 0.9973,
        include_mean: !paper,
        gp_warm_start: !paper,
        gp_restarts: 0,
      };
      if (method === 'prob-snes') base.snes_form = paper ? 'reference' : 'natural';
      return base;
    }
    case 'cmaes':
      return { sigma0: 1, active: true };
    case 'xnes': // ALGORITHM.md §6: η_M = 0.6(3 + ln d)/(d√d)
      return { learning_rate_mean: 1, learning_rate_cov: (0.6 * (3 + Math.log(d))) / (d * Math.sqrt(d)) };
    case 'snes': // ALGORITHM.md §6: η_σ = 0.2(3 + ln d)/√d
      return { learning_rate_mean: 1, learning_rate_cov: (0.2 * (3 + Math.log(d))) / Math.sqrt(d) };
    case 'bo':
      return { candidates: 2000, mc_samples: 256, box_std: 3 };
    case 'pibo':
      return { candidates: 2000, mc_samples: 256, box_std: 3, beta: 1 };
    case 'random':
      return {};
  }
}

/** Effective options: defaults for the chosen profile, overridden by what the user gave. */
export function resolveOptions(method: MethodName, d: number, given: Options = {}): Options {
  const profileName = typeof given.profile === 'string' ? given.profile : 'default';
  return { ...defaultOptions(method, d, profileName), ...given };
}

export { METHOD_NAMES };
