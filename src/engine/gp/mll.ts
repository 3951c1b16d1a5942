/**
 * Log marginal likelihood of the constant-mean GP, the MAP objective, and their analytic gradients
 * (ALGORITHM.md §2; Rasmussen & Williams 2006, eqs. 2.30 and 5.9).
 *
 * Glossary: n points, d dimension. X: n×d, y: n. K = s·E + (σ²_n + jitter) I (n×n), E_ij =
 * exp(−½ D_ij), D_ij = (x_i − x_j)ᵀ Λ⁻¹ (x_i − x_j). α = K⁻¹(y − c·1) (n).
 * Optimisation vector φ (d + 3) = [log ℓ_1 … log ℓ_d, log s, ρ, c], with σ²_n = 1e-4 + exp(ρ).
 *
 *   mll(φ) = −½ (y − c)ᵀ α − ½ log det K − (n/2) log 2π
 *   ∂mll/∂φ_k = ½ tr((ααᵀ − K⁻¹) ∂K/∂φ_k)               (R&W eq. 5.9)
 *   ∂K_ij/∂log ℓ_k = s·E_ij·(x_ik − x_jk)²/ℓ_k²,  ∂K/∂log s = s·E,  ∂K/∂ρ = e^ρ I,  ∂mll/∂c = 1ᵀα.
 * The trace is taken elementwise over i < j (no n×n×d tensor): O(n²d) per gradient after the
 * O(n³/3) Cholesky and O(n³/3) inverse.
 *
 * The fit evaluates the objective through `mapObjectiveEvaluator`: one set of n×n buffers for the
 * whole fit (K, its factor, K⁻¹ and scratch), and the gradient — K⁻¹ plus the trace terms, twice the
 * cost of the value — only when the optimiser asks for it (a line-search step that fails the
 * sufficient-decrease test needs no gradient). Value and gradient are the same arithmetic, in the
 * same order, as `logMarginalLikelihood` + `logPrior`, so both paths agree to the last bit.
 */
import { type Mat, type Vec, cholesky, choleskyInto, cholInverseSymInto, cholSolve, logDetFromChol } from '../linalg/index.js';
import { inverseSquaredLengthscales, kernelMatrix, kernelMatrixInto, type KnownNoise } from './kernel.js';
import { dLogGammaPdf, logGammaPdf } from './priors.js';
import type { GpHyper, GpPriors } from './types.js';

/** σ²_n floor on the standardised scale (ALGORITHM.md §2). */
export const NOISE_FLOOR = 1e-4;

/** φ = [log ℓ, log s, ρ, c] from hyperparameters (noise at or below the floor maps to ρ = log 1e-12·…). */
export function packHyper(h: GpHyper): Float64Array {
  const d = h.lengthscales.length;
  const phi = new Float64Array(d + 3);
  for (let i = 0; i < d; i++) phi[i] = Math.log(h.lengthscales[i]);
  phi[d] = Math.log(h.outputscale);
  phi[d + 1] = Math.log(Math.max(h.noise - NOISE_FLOOR, 1e-12));
  phi[d + 2] = h.constant;
  return phi;
}

export function unpackHyper(phi: ArrayLike<number>, d: number): GpHyper {
  const lengthscales: number[] = [];
  for (let i = 0; i < d; i++) lengthscales.push(Math.exp(phi[i]));
  return { lengthscales, outputscale: Math.exp(phi[d]), noise: NOISE_FLOOR + Math.exp(phi[d + 1]), constant: phi[d + 2] };
}

export interface MllResult {
  /** Log marginal likelihood. */
  value: number;
  /** ∂mll/∂φ (d + 3), present when requested. */
  grad: Float64Array | null;
  /** Cholesky factor of K + jitter·I, α and the jitter, reused to build the model. */
  L: Mat;
  alpha: Vec;
  jitter: number;
}

/** Log marginal likelihood and (optionally) its gradient w.r.t. φ. Throws NotPositiveDefinite. */
export function logMarginalLikelihood(X: Mat, y: ArrayLike<number>, hyper: GpHyper, withGrad = true, known: KnownNoise = null): MllResult {
  const n = X.rows;
  const K = kernelMatrix(X, hyper, known);
  const { L, jitter } = cholesky(K);
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) r[i] = y[i] - hyper.constant;
  const alpha = cholSolve(L, r);
  let quad = 0;
  for (let i = 0; i < n; i++) quad += r[i] * alpha[i];
  const value = -0.5 * quad - 0.5 * logDetFromChol(L) - 0.5 * n * Math.log(2 * Math.PI);
  const grad = withGrad ? mllGradient(X, hyper, K, L, alpha) : null;
  return { value, grad, L, alpha, jitter };
}

/** ½ tr((ααᵀ − K⁻¹) ∂K/∂φ) for every φ_k, elementwise; K holds s·E off the diagonal. */
function mllGradient(X: Mat, hyper: GpHyper, K: Mat, L: Mat, alpha: Vec): Float64Array {
  const n = X.rows;
  const Kinv = new Float64Array(n * n);
  cholInverseSymInto(L.data, n, Kinv, new Float64Array(n * n));
  return mllGradientFrom(X, hyper, K.data, Kinv, alpha);
}

/**
 * The trace terms of `mllGradient` from K (s·E off the diagonal) and K⁻¹, both n×n row-major. The
 * restricted likelihood (reml.ts) passes its projection P in place of K⁻¹ (same trace form). Pairs
 * (i, j) are visited in the plain order, four j at a time, each ∂/∂log ℓ_c receiving its four terms
 * in that order: one load and store of the accumulator per four pairs, and the same sums.
 */
export function mllGradientFrom(X: Mat, hyper: GpHyper, k: Float64Array, Kinv: Float64Array, alpha: Vec): Float64Array {
  const n = X.rows, d = X.cols;
  const w = inverseSquaredLengthscales(hyper.lengthscales);
  const x = X.data, s = hyper.outputscale;
  const grad = new Float64Array(d + 3);
  let gs = 0, trW = 0;
  for (let i = 0; i < n; i++) {
    const ai = alpha[i], ri = i * n, xi = i * d;
    const wii = ai * ai - Kinv[ri + i];
    trW += wii;
    gs += 0.5 * wii * s; // diagonal of s·E is s
    let j = i + 1;
    // Off-diagonal pairs appear twice in the trace: factor ½ · 2 = 1.
    for (; j + 3 < n; j += 4) {
      const we0 = (ai * alpha[j] - Kinv[ri + j]) * k[ri + j];
      const we1 = (ai * alpha[j + 1] - Kinv[ri + j + 1]) * k[ri + j + 1];
      const we2 = (ai * alpha[j + 2] - Kinv[ri + j + 2]) * k[ri + j + 2];
      const we3 = (ai * alpha[j + 3] - Kinv[ri + j + 3]) * k[ri + j + 3];
      gs += we0;
      gs += we1;
      gs += we2;
      gs += we3;
      const x0 = j * d, x1 = x0 + d, x2 = x1 + d, x3 = x2 + d;
      for (let c = 0; c < d; c++) {
        const a = x[xi + c], wc = w[c];
        const t0 = a - x[x0 + c], t1 = a - x[x1 + c], t2 = a - x[x2 + c], t3 = a - x[x3 + c];
        let g = grad[c];
        g += we0 * t0 * t0 * wc;
        g += we1 * t1 * t1 * wc;
        g += we2 * t2 * t2 * wc;
        g += we3 * t3 * t3 * wc;
        grad[c] = g;
      }
    }
    for (; j < n; j++) {
      const we = (ai * alpha[j] - Kinv[ri + j]) * k[ri + j];
      gs += we;
      for (let c = 0; c < d; c++) {
        const t = x[xi + c] - x[j * d + c];
        grad[c] += we * t * t * w[c];
      }
    }
  }
  grad[d] = gs;
  grad[d + 1] = 0.5 * trW * (hyper.noise - NOISE_FLOOR);
  let sumAlpha = 0;
  for (let i = 0; i < n; i++) sumAlpha += alpha[i];
  grad[d + 2] = sumAlpha;
  return grad;
}

/** Σ log priors on ℓ_i, s, σ²_n and its gradient w.r.t. φ (chain rule through exp; no Jacobian term). */
export function logPrior(hyper: GpHyper, priors: GpPriors): { value: number; grad: Float64Array } {
  const d = hyper.lengthscales.length;
  const grad = new Float64Array(d + 3);
  let value = 0;
  for (let i = 0; i < d; i++) {
    const l = hyper.lengthscales[i];
    value += logGammaPdf(l, priors.lengthscale);
    grad[i] = dLogGammaPdf(l, priors.lengthscale) * l;
  }
  value += logGammaPdf(hyper.outputscale, priors.outputscale);
  grad[d] = dLogGammaPdf(hyper.outputscale, priors.outputscale) * hyper.outputscale;
  value += logGammaPdf(hyper.noise, priors.noise);
  grad[d + 1] = dLogGammaPdf(hyper.noise, priors.noise) * (hyper.noise - NOISE_FLOOR);
  return { value, grad };
}

export interface MapObjective {
  /** (mll + Σ log priors)/n: the quantity maximised by the fit. */
  value: number;
  grad: Float64Array;
}

/** MAP objective (mll + Σ log priors)/n at φ and its gradient w.r.t. φ. Throws NotPositiveDefinite. */
export function mapObjective(X: Mat, y: ArrayLike<number>, phi: ArrayLike<number>, priors: GpPriors): MapObjective {
  const ev = mapObjectiveEvaluator(X, y, priors);
  const value = ev.value(phi);
  return { value, grad: ev.gradient() };
}

/** The MAP objective of one data set, evaluated many times with shared buffers (see the header). */
export interface MapObjectiveEvaluator {
  /** (mll + Σ log priors)/n at φ. Throws NotPositiveDefinite when K cannot be factorised. */
  value(phi: ArrayLike<number>): number;
  /** ∂/∂φ of the objective at the φ of the last `value` call (which must have succeeded); a new array. */
  gradient(): Float64Array;
}

export function mapObjectiveEvaluator(X: Mat, y: ArrayLike<number>, priors: GpPriors, known: KnownNoise = null): MapObjectiveEvaluator {
  const n = X.rows, nn = n * n;
  const K = { rows: n, cols: n, data: new Float64Array(nn) };
  const L = { rows: n, cols: n, data: new Float64Array(nn) };
  const Kinv = new Float64Array(nn);
  const scratch = new Float64Array(nn); // jittered copy of K, then L⁻ᵀ for the inverse
  const r = new Float64Array(n);
  const scale = Math.max(n, 1);
  let hyper: GpHyper | null = null;
  let alpha: Vec = r;
  let priorGrad: Float64Array = r;
  return {
    value(phi) {
      hyper = null;
      const h = unpackHyper(phi, X.cols);
      kernelMatrixInto(X, h, K.data, known);
      choleskyInto(K.data, n, L.data, scratch);
      for (let i = 0; i < n; i++) r[i] = y[i] - h.constant;
      alpha = cholSolve(L, r);
      let quad = 0;
      for (let i = 0; i < n; i++) quad += r[i] * alpha[i];
      const mll = -0.5 * quad - 0.5 * logDetFromChol(L) - 0.5 * n * Math.log(2 * Math.PI);
      const p = logPrior(h, priors);
      priorGrad = p.grad;
      hyper = h;
      return (mll + p.value) / scale;
    },
    gradient() {
      if (!hyper) throw new Error('mapObjectiveEvaluator: gradient() needs a successful value() first');
      cholInverseSymInto(L.data, n, Kinv, scratch);
      const g = mllGradientFrom(X, hyper, K.data, Kinv, alpha);
      for (let i = 0; i < g.length; i++) g[i] = (g[i] + priorGrad[i]) / scale;
      return g;
    },
  };
}
