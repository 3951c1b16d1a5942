/**
 * Bayesian quadrature on a mixed space (ALGORITHM.md §27): the search distribution is
 * ν = N(μ, Σ) × Π_j Cat(q_j) and the GP kernel the product of gp/mixed-kernel.ts, so every integral
 * of paper Prop. 1 factorises into the Gaussian one of measure.ts / bq.ts times finite sums.
 *
 * Glossary: n training points with GP inputs φ_i = [u_i, one-hot(c_i)] (the model's X, n×(d_c+ΣK)),
 * d_c continuous dimensions, m categorical parameters with K_j choices and probabilities q_j,
 * α = K⁻¹(y − c·1), w_j (K_j) = 1/ℓ² of parameter j's one-hot columns (mixed-kernel.ts),
 * t^c_i the Gaussian kernel mean of the continuous part (eq. E.i, with the continuous lengthscales
 * and the outputscale s), τ_j(b) = Σ_a q_{j,a} κ_j(a, b), ρ_j = Σ_{a,b} q_{j,a} q_{j,b} κ_j(a, b).
 *
 *   t_i   = t^c_i · Π_j τ_j(c_ij)                                          (kernel mean)
 *   R     = R^c · Π_j ρ_j                                                   (R^c of Appendix B)
 *   E[g]  = c + Σ_i α_i t_i,       V = R − tᵀ K⁻¹ t                          (Prop. 1)
 *   ĝ_j   = ∫ m_post(x) (e_{c_j} − q_j) dν(x)
 *         = Σ_i α_i t^c_i Π_{l≠j} τ_l(c_il) · Σ_a q_{j,a} κ_j(a, c_ij) (e_a − q_j)   (K_j)
 *
 * ĝ_j is the expected natural gradient of E[g] with respect to q_j (the Fisher information of a
 * categorical distribution inverts ∇ ln q into e_c − q; distributions/categorical.ts), the BQ
 * counterpart of CatCMA's Σ_i w_i (e_{c_i} − q). The constant c adds nothing (E[e_c − q] = 0).
 * With d_c = 0 the continuous factors are t^c_i = R^c = s.
 *
 * The expected gradient in (μ, Σ) is bq.ts's with the weights w_i = α_i t_i (the categorical
 * factors included), since each t_i depends on (μ, Σ) only through t^c_i (eqs. E.j, E.k):
 *   g_μ = Σ_i w_i p_i,   G = ½ (Σ_i w_i p_i p_iᵀ − (Σ_i w_i) S⁻¹),   p_i = S⁻¹(u_i − μ), S = Σ + Λ_c.
 */
import { cholInverseSym, solveLower, solveLowerT } from '../linalg/index.js';
import { NonFiniteError } from '../errors.js';
import type { GpModel } from '../gp/types.js';
import { blockOffsets, blockWeights, overlapDoubleMean, overlapKernel, overlapKernelMean } from '../gp/mixed-kernel.js';
import { type CovInput, integralPriorVariance, kernelMeanAt, prepareKernelMeasure } from './measure.js';

/** The layout of a mixed model's inputs and the categorical part of ν. */
export interface MixedMeasure {
  /** d_c: continuous coordinates (the first columns of the model's X). */
  dc: number;
  /** K_j per categorical parameter. */
  K: readonly number[];
  /** q_j per categorical parameter. */
  q: readonly (readonly number[])[];
}

export interface MixedQuadrature {
  /** t^c_i (n): continuous kernel means. */
  tc: Float64Array;
  /** The choice c_ij of each training point (n × m). */
  choices: number[][];
  /** τ_j(c_ij) (n × m). */
  tau: number[][];
  /** t_i = t^c_i Π_j τ_j(c_ij) (n). */
  t: Float64Array;
  /** Per parameter, w_j = 1/ℓ² of its one-hot columns. */
  w: Float64Array[];
}

function choiceOf(row: ArrayLike<number>, offset: number, K: number): number {
  for (let a = 0; a < K; a++) if (row[offset + a]! === 1) return a;
  throw new NonFiniteError('mixed quadrature: a training input has no one-hot choice');
}

/** The continuous part of the hyperparameters (the first dc lengthscales, same s). */
function continuousHyper(model: GpModel, dc: number) {
  return { ...model.hyper, lengthscales: model.hyper.lengthscales.slice(0, dc) };
}

/** t_i and its factors for every training point. */
export function mixedKernelMeans(model: GpModel, nu: MixedMeasure, mean: ArrayLike<number>, cov: CovInput): MixedQuadrature {
  const { dc, K, q } = nu;
  const n = model.X.rows, D = model.X.cols;
  const offsets = blockOffsets(dc, K);
  const w = blockWeights(model.hyper.lengthscales, dc, K);
  const m = dc > 0 ? prepareKernelMeasure(continuousHyper(model, dc), mean, cov) : null;
  const tc = new Float64Array(n), t = new Float64Array(n);
  const choices: number[][] = [], tau: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row = model.X.data.subarray(i * D, (i + 1) * D);
    tc[i] = m ? kernelMeanAt(m, row.subarray(0, dc)).t : model.hyper.outputscale;
    const ci = K.map((k, j) => choiceOf(row, offsets[j]!, k));
    const taui = ci.map((b, j) => overlapKernelMean(w[j]!, q[j]!, b));
    choices.push(ci);
    tau.push(taui);
    t[i] = taui.reduce((acc, v) => acc * v, tc[i]!);
  }
  return { tc, choices, tau, t, w };
}

/** Posterior mean and variance of F = ∫ f dν on the mixed space (header). */
export function mixedBqIntegral(model: GpModel, nu: MixedMeasure, mean: ArrayLike<number>, cov: CovInput): { mean: number; variance: number; priorVariance: number; t: Float64Array } {
  const mq = mixedKernelMeans(model, nu, mean, cov);
  const Rc = nu.dc > 0 ? integralPriorVariance(continuousHyper(model, nu.dc), cov) : model.hyper.outputscale;
  const R = mq.w.reduce((acc, wj, j) => acc * overlapDoubleMean(wj, nu.q[j]!), Rc);
  const z = solveLower(model.L, mq.t);
  let tKt = 0, F = model.hyper.constant;
  for (let i = 0; i < z.length; i++) {
    tKt += z[i]! * z[i]!;
    F += model.alpha[i]! * mq.t[i]!;
  }
  const out = { mean: F, variance: Math.max(R - tKt, 0), priorVariance: R, t: mq.t };
  if (!Number.isFinite(out.mean) || !Number.isFinite(out.variance)) throw new NonFiniteError('mixedBqIntegral: non-finite result');
  return out;
}

/** ĝ_j for every categorical parameter (header): the expected natural gradient in q. */
export function categoricalNaturalGradient(model: GpModel, nu: MixedMeasure, mq: MixedQuadrature): number[][] {
  return nu.K.map((Kj, j) => {
    const qj = nu.q[j]!, wj = mq.w[j]!;
    const g = new Array<number>(Kj).fill(0);
    for (let i = 0; i < mq.t.length; i++) {
      // α_i t^c_i Π_{l≠j} τ_l(c_il), without dividing by τ_j (which could underflow).
      let coef = model.alpha[i]! * mq.tc[i]!;
      mq.tau[i]!.forEach((v, l) => (coef *= l === j ? 1 : v));
      if (coef === 0) continue;
      const b = mq.choices[i]![j]!;
      let tauj = 0;
      for (let a = 0; a < Kj; a++) {
        const ka = qj[a]! * overlapKernel(wj, a, b);
        g[a]! += coef * ka;
        tauj += ka;
      }
      for (let a = 0; a < Kj; a++) g[a]! -= coef * tauj * qj[a]!;
    }
    if (!g.every(Number.isFinite)) throw new NonFiniteError('categoricalNaturalGradient: non-finite gradient');
    return g;
  });
}

/** g_μ (d_c) and G (d_c × d_c, rows) of E[g] on the mixed space (header), and the quadrature's factors. */
export function mixedExpectedGradient(model: GpModel, nu: MixedMeasure, mean: ArrayLike<number>, cov: CovInput): { gMean: number[]; gCov: number[][]; mq: MixedQuadrature } {
  const mq = mixedKernelMeans(model, nu, mean, cov);
  const d = nu.dc;
  if (d === 0) return { gMean: [], gCov: [], mq };
  const m = prepareKernelMeasure(continuousHyper(model, d), mean, cov);
  const D = model.X.cols;
  const g = new Float64Array(d);
  const M = new Float64Array(d * d);
  let wSum = 0;
  for (let i = 0; i < model.X.rows; i++) {
    const w = model.alpha[i]! * mq.t[i]!;
    if (w === 0) continue;
    wSum += w;
    const { z } = kernelMeanAt(m, model.X.data.subarray(i * D, i * D + d));
    const p = solveLowerT(m.LS, z); // S⁻¹ r_i
    for (let a = 0; a < d; a++) {
      g[a]! += w * p[a]!;
      for (let b = 0; b < d; b++) M[a * d + b]! += w * p[a]! * p[b]!;
    }
  }
  const Sinv = cholInverseSym(m.LS);
  const gCov = Array.from({ length: d }, (_, a) => Array.from({ length: d }, (_, b) => 0.5 * (M[a * d + b]! - wSum * Sinv.data[a * d + b]!)));
  const gMean = Array.from(g);
  if (!gMean.every(Number.isFinite) || !gCov.every((r) => r.every(Number.isFinite))) throw new NonFiniteError('mixedExpectedGradient: non-finite gradient');
  return { gMean, gCov, mq };
}
