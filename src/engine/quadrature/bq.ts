/**
 * Bayesian quadrature of the GP posterior under ν = N(μ, Σ) and the expected natural-ES gradient
 * (paper Prop. 1, eq. (covariancestructure), with eqs. (E.a), (E.b), (E.i)–(E.k); ALGORITHM.md §3).
 *
 * Glossary: n training points, d dimension. `mean` μ (d), `cov` Σ (d×d), S = Σ + Λ (d×d),
 * r_j = u_j − μ, p_j = S⁻¹ r_j (d), t (n) kernel means, α = K⁻¹(y − c·1) (n), w_j = α_j t_j (n).
 *   E[g] = c + Σ_j α_j t_j                                           (Prop. 1, first line)
 *   V    = R − tᵀ K⁻¹ t  (clamped at 0)                              (Prop. 1, third line)
 *   g_μ  = Σ_j w_j p_j = S⁻¹ Σ_j w_j r_j                             (eq. E.j; E.b: the constant adds 0)
 *   G    = ½ S⁻¹ [Σ_j w_j (r_j r_jᵀ − S)] S⁻¹ = ½ (Σ_j w_j p_j p_jᵀ − (Σ_j w_j) S⁻¹)   (eq. E.k)
 * G_ij = ∂E[g]/∂Σ_ij with all d² entries of Σ independent (the convention of the updates in §4).
 * S⁻¹ is formed from its Cholesky factor (d×d) only for the last term of G.
 */
import { type Mat, cholInverseSym, isFiniteMat, isFiniteVec, solveLower, solveLowerT } from '../linalg/index.js';
import { NonFiniteError } from '../errors.js';
import type { GpModel } from '../gp/types.js';
import { type CovInput, type KernelMeasure, integralPriorVariance, kernelMeanAt, kernelMeansFor, prepareKernelMeasure } from './measure.js';

export interface BqIntegral {
  /** E[g] = ∫ m_post dν. */
  mean: number;
  /** V = R − tᵀK⁻¹t ≥ 0: posterior variance of the integral. */
  variance: number;
  /** R: prior variance of the integral. */
  priorVariance: number;
  /** Kernel means t (n). */
  t: Float64Array;
}

function integralMean(model: GpModel, t: Float64Array): number {
  let s = model.hyper.constant;
  for (let j = 0; j < t.length; j++) s += model.alpha[j] * t[j];
  return s;
}

/** Posterior mean and variance of F = ∫ f dν. */
export function bqIntegral(model: GpModel, mean: ArrayLike<number>, cov: CovInput): BqIntegral {
  const m = prepareKernelMeasure(model.hyper, mean, cov);
  const t = kernelMeansFor(m, model.X);
  const R = integralPriorVariance(model.hyper, m.cov);
  const z = solveLower(model.L, t);
  let tKt = 0;
  for (let j = 0; j < z.length; j++) tKt += z[j] * z[j];
  const out = { mean: integralMean(model, t), variance: Math.max(R - tKt, 0), priorVariance: R, t };
  if (!Number.isFinite(out.mean) || !Number.isFinite(out.variance)) throw new NonFiniteError('bqIntegral: non-finite result');
  return out;
}

export interface ExpectedGradient {
  /** g_μ = ∂E[g]/∂μ (d). */
  gradMean: Float64Array;
  /** G = ∂E[g]/∂Σ (d×d, symmetric, entries treated as independent). */
  gradCov: Mat;
  /** E[g] at (μ, Σ). */
  integralMean: number;
  /** Kernel means t (n). */
  t: Float64Array;
}

/** Σ_j w_j p_j and Σ_j w_j p_j p_jᵀ with p_j = S⁻¹ r_j, accumulated in one pass over the data. */
function weightedMoments(model: GpModel, m: KernelMeasure): { t: Float64Array; g: Float64Array; M: Mat; wSum: number } {
  const n = model.X.rows, d = m.d;
  const t = new Float64Array(n), g = new Float64Array(d);
  const M: Mat = { rows: d, cols: d, data: new Float64Array(d * d) };
  let wSum = 0;
  for (let j = 0; j < n; j++) {
    const { t: tj, z } = kernelMeanAt(m, model.X.data.subarray(j * d, (j + 1) * d));
    t[j] = tj;
    const w = model.alpha[j] * tj;
    if (w === 0) continue;
    wSum += w;
    const p = solveLowerT(m.LS, z); // S⁻¹ r_j = L_S⁻ᵀ L_S⁻¹ r_j
    for (let a = 0; a < d; a++) {
      g[a] += w * p[a];
      const wp = w * p[a];
      for (let b = a; b < d; b++) M.data[a * d + b] += wp * p[b];
    }
  }
  for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) M.data[a * d + b] = M.data[b * d + a];
  return { t, g, M, wSum };
}

/** The expected gradient of g(μ, Σ) = E_ν[f] under the GP posterior (Prop. 1 with Cor. 1). */
export function expectedGradient(model: GpModel, mean: ArrayLike<number>, cov: CovInput): ExpectedGradient {
  const m = prepareKernelMeasure(model.hyper, mean, cov);
  const { t, g, M, wSum } = weightedMoments(model, m);
  const Sinv = cholInverseSym(m.LS); // exactly symmetric, so G is too
  const G = M;
  for (let i = 0; i < G.data.length; i++) G.data[i] = 0.5 * (G.data[i] - wSum * Sinv.data[i]);
  const integral = integralMean(model, t);
  if (!isFiniteVec(g) || !isFiniteMat(G) || !Number.isFinite(integral)) {
    throw new NonFiniteError('expectedGradient: non-finite gradient');
  }
  return { gradMean: g, gradCov: G, integralMean: integral, t };
}
