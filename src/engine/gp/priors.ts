/**
 * Gamma hyperpriors on the positive GP hyperparameter values (ALGORITHM.md §2 and §6).
 *
 * Glossary: d = dimension; Gamma(a, b) has shape a, rate b, density b^a x^{a−1} e^{−bx} / Γ(a).
 * The priors are densities of ℓ_i, s and σ²_n themselves (no Jacobian term for the log
 * parametrisation), as in GPyTorch/BoTorch whose defaults these are.
 */
import type { Rng } from '../random/index.js';
import type { GpHyper, GpPriors } from './types.js';

/** ProbNES priors: ℓ_i ~ Gamma(d, √d), s ~ Gamma(6, 3), σ²_n ~ Gamma(1.1, 0.05). */
export function probnesPriors(d: number): GpPriors {
  return {
    lengthscale: { shape: d, rate: Math.sqrt(d) },
    outputscale: { shape: 6, rate: 3 },
    noise: { shape: 1.1, rate: 0.05 },
  };
}

/** The ProbNES default priors, a function of the dimension d. */
export const DEFAULT_PROBNES_PRIORS = probnesPriors;

/** BO baseline (legacy BoTorch) priors: ℓ_i ~ Gamma(3, 6), s ~ Gamma(2, 0.15), σ²_n ~ Gamma(1.1, 0.05). */
export function boPriors(): GpPriors {
  return {
    lengthscale: { shape: 3, rate: 6 },
    outputscale: { shape: 2, rate: 0.15 },
    noise: { shape: 1.1, rate: 0.05 },
  };
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Γ(x) for x > 0 (Lanczos, g = 7, n = 9: ~15 significant digits). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const xm1 = x - 1;
  let a = LANCZOS[0];
  const t = xm1 + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (xm1 + i);
  return 0.5 * Math.log(2 * Math.PI) + (xm1 + 0.5) * Math.log(t) - t + Math.log(a);
}

export interface GammaPrior {
  shape: number;
  rate: number;
}

/** log Gamma(x; a, b). */
export function logGammaPdf(x: number, p: GammaPrior): number {
  return p.shape * Math.log(p.rate) - logGamma(p.shape) + (p.shape - 1) * Math.log(x) - p.rate * x;
}

/** d/dx log Gamma(x; a, b) = (a − 1)/x − b. */
export function dLogGammaPdf(x: number, p: GammaPrior): number {
  return (p.shape - 1) / x - p.rate;
}

/** Mode (a − 1)/b, or the mean a/b when a ≤ 1 (the mode is then 0, an unusable lengthscale). */
export function gammaMode(p: GammaPrior): number {
  return p.shape > 1 ? (p.shape - 1) / p.rate : p.shape / p.rate;
}

/** One Gamma(a, b) draw (Marsaglia & Tsang 2000; a < 1 through the a + 1 boost). */
export function sampleGamma(rng: Rng, p: GammaPrior): number {
  const a = p.shape < 1 ? p.shape + 1 : p.shape;
  const dd = a - 1 / 3;
  const c = 1 / Math.sqrt(9 * dd);
  for (;;) {
    const z = rng.normal();
    const v = Math.pow(1 + c * z, 3);
    if (v <= 0) continue;
    const u = rng.uniformOpen();
    if (Math.log(u) < 0.5 * z * z + dd - dd * v + dd * Math.log(v)) {
      const g = (dd * v) / p.rate;
      return p.shape < 1 ? g * Math.pow(rng.uniformOpen(), 1 / p.shape) : g;
    }
  }
}

/** Hyperparameters at the prior modes (the fit's last-resort fallback); c = mean of y. */
export function priorModeHyper(priors: GpPriors, d: number, constant: number): GpHyper {
  return {
    lengthscales: new Array<number>(d).fill(gammaMode(priors.lengthscale)),
    outputscale: gammaMode(priors.outputscale),
    noise: Math.max(gammaMode(priors.noise), 1e-4),
    constant,
  };
}

/** Hyperparameters drawn from the priors (restarts after a failed fit); c = mean of y. */
export function samplePriorHyper(priors: GpPriors, d: number, constant: number, rng: Rng): GpHyper {
  const lengthscales: number[] = [];
  for (let i = 0; i < d; i++) lengthscales.push(sampleGamma(rng, priors.lengthscale));
  return {
    lengthscales,
    outputscale: sampleGamma(rng, priors.outputscale),
    noise: Math.max(sampleGamma(rng, priors.noise), 2e-4),
    constant,
  };
}
