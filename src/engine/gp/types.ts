/**
 * GP surrogate types (ALGORITHM.md §2). Implemented in gp/*.ts.
 *
 * Glossary: n = number of training points, d = dimension. X: n×d inputs (number[][]), y: n targets.
 * Hyperparameters: lengthscales ℓ (d), outputscale s, noise σ²_n (≥ 1e-4 floor), constant mean c.
 * Kernel k(u,u') = s·exp(−½ (u−u')ᵀ Λ⁻¹ (u−u')), Λ = diag(ℓ²).
 */
import type { Mat, Vec } from '../linalg/index.js';

export interface GpHyper {
  lengthscales: number[];
  outputscale: number;
  noise: number;
  constant: number;
}

/** Gamma(shape, rate) priors on the positive hyperparameter values (ALGORITHM.md §2, §6). */
export interface GpPriors {
  lengthscale: { shape: number; rate: number };
  outputscale: { shape: number; rate: number };
  noise: { shape: number; rate: number };
}

/** A fitted GP: hyperparameters plus the factorisation needed for prediction and quadrature. */
export interface GpModel {
  hyper: GpHyper;
  X: Mat; // n×d
  y: Vec; // n
  /** Lower Cholesky factor of K = s·RBF(X, X) + (σ²_n + jitter) I. */
  L: Mat;
  /** α = K⁻¹ (y − c·1). */
  alpha: Vec;
  jitter: number;
  /**
   * Per-point known noise variances on K's diagonal (reported standard errors², targets' units), when
   * the data came with them; absent: none. Prediction at new points is of the latent f either way.
   */
  knownNoise?: number[];
}

export interface GpFitResult {
  model: GpModel;
  /** MAP objective (log marginal likelihood + log priors)/n at the optimum. */
  objective: number;
  /** Set when every start failed and the prior modes were used instead. */
  fallbackReason: string | null;
  /** MAP objective values and gradients computed over all starts (cost accounting). */
  evaluations: { values: number; gradients: number };
  /**
   * With `basis`: the GLS coefficients β̂ (p). `model` is then the residual GP (zero mean, fitted
   * to y − Hβ̂), so the posterior mean at u is h(u)ᵀβ̂ + the model's mean (reml.ts).
   */
  beta?: Vec;
}

export interface GpFitOptions {
  priors: GpPriors;
  /** Previous MAP hyperparameters: an extra start (ALGORITHM.md §11). */
  warmStart?: GpHyper | null;
  /**
   * Also start from the default hyperparameters (default true). Ignored without a valid warm start:
   * the default start is then always made.
   */
  coldStart?: boolean;
  /** Extra starts from prior draws (used only when starts fail, plus this many more). */
  restarts?: number;
  /**
   * Explicit basis functions at the data (H, n×p; basis.ts): fit the GP with mean h(u)ᵀβ by the
   * restricted likelihood, β by GLS (reml.ts). Absent: the constant-mean GP of ALGORITHM.md §2.
   */
  basis?: Mat | null;
  /**
   * Per-point known noise variances (n, ≥ 0, the targets' units: a reported standard error², scaled
   * as the targets are), added to K's diagonal on top of the learned σ²_n. Absent: none (the paper's GP).
   */
  knownNoise?: ArrayLike<number> | null;
  /** Needed only when restarts from prior draws are made. */
  rng?: import('../random/index.js').Rng;
}
