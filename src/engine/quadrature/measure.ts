/**
 * Kernel means and the integral prior variance of the ARD-RBF kernel under a Gaussian measure
 * (paper Appendix B "Quadrature", and eq. (E.i); ALGORITHM.md §3).
 *
 * Glossary: d dimension; ν = N(μ, Σ) the search distribution, `mean` μ (d), `cov` Σ (d×d);
 * Λ = diag(ℓ²); S = Σ + Λ (d×d) with lower Cholesky factor L_S; r_j = u_j − μ (d).
 *   t_j = θ·N(u_j; μ, S) = s·sqrt(det Λ / det S)·exp(−½ r_jᵀ S⁻¹ r_j)         (eq. E.i)
 *   R   = θ·N(μ; μ, Λ + 2Σ) = s·sqrt(det Λ / det(Λ + 2Σ))                      (Appendix B)
 * Every determinant is a log-determinant from a Cholesky factor and every density is evaluated in
 * log space: Πℓ_i and det S over- or underflow long before the ratio does (d = 30, ℓ ≈ 0.1).
 */
import { InvalidInputError } from '../errors.js';
import { type Mat, cholesky, isFiniteMat, isFiniteVec, logDetFromChol, solveLower, symmetrize } from '../linalg/index.js';
import { toMat } from '../gp/kernel.js';
import type { GpHyper } from '../gp/types.js';

export type Points = ArrayLike<ArrayLike<number>> | Mat;
export type CovInput = ArrayLike<ArrayLike<number>> | Mat;

/** Σ as a symmetric Mat, checked for shape and finiteness. */
export function covMat(cov: CovInput, d: number): Mat {
  const C = toMat(cov);
  if (C.rows !== d || C.cols !== d) throw new InvalidInputError(`cov must be ${d}×${d}, got ${C.rows}×${C.cols}`);
  if (!isFiniteMat(C)) throw new InvalidInputError('cov has non-finite entries');
  return symmetrize(C);
}

function checkMean(mean: ArrayLike<number>, d: number): Float64Array {
  if (mean.length !== d) throw new InvalidInputError(`mean has dimension ${mean.length}, expected ${d}`);
  if (!isFiniteVec(mean)) throw new InvalidInputError('mean has non-finite entries');
  return Float64Array.from(mean);
}

/** log det Λ = 2 Σ log ℓ_i. */
export function logDetLambda(lengthscales: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < lengthscales.length; i++) s += 2 * Math.log(lengthscales[i]);
  return s;
}

/** Σ + c·Λ, symmetric. */
function plusLambda(cov: Mat, lengthscales: ArrayLike<number>, covScale: number): Mat {
  const d = cov.rows;
  const M = { rows: d, cols: d, data: cov.data.map((v) => v * covScale) };
  for (let i = 0; i < d; i++) M.data[i * d + i] += lengthscales[i] * lengthscales[i];
  return M;
}

/** Everything about ν and the kernel that the kernel means need, computed once. */
export interface KernelMeasure {
  d: number;
  mean: Float64Array;
  /** Σ (symmetrised). */
  cov: Mat;
  /** Lower Cholesky factor of S = Σ + Λ. */
  LS: Mat;
  /** log s + ½ (log det Λ − log det S): log t_j at r_j = 0. */
  logPeak: number;
}

export function prepareKernelMeasure(hyper: GpHyper, mean: ArrayLike<number>, cov: CovInput): KernelMeasure {
  const d = hyper.lengthscales.length;
  const mu = checkMean(mean, d);
  const C = covMat(cov, d);
  const { L: LS } = cholesky(plusLambda(C, hyper.lengthscales, 1));
  const logPeak = Math.log(hyper.outputscale) + 0.5 * (logDetLambda(hyper.lengthscales) - logDetFromChol(LS));
  return { d, mean: mu, cov: C, LS, logPeak };
}

/** z = L_S⁻¹ r for r = u − μ; t = exp(logPeak − ½‖z‖²). */
export function kernelMeanAt(m: KernelMeasure, u: ArrayLike<number>): { t: number; z: Float64Array } {
  const r = new Float64Array(m.d);
  for (let i = 0; i < m.d; i++) r[i] = u[i] - m.mean[i];
  const z = solveLower(m.LS, r);
  let q = 0;
  for (let i = 0; i < m.d; i++) q += z[i] * z[i];
  return { t: Math.exp(m.logPeak - 0.5 * q), z };
}

/** Kernel-mean vector τ_j = ∫ k(x, u_j) dν(x) for arbitrary points (eq. E.i). */
export function kernelMeans(hyper: GpHyper, points: Points, mean: ArrayLike<number>, cov: CovInput): Float64Array {
  const m = prepareKernelMeasure(hyper, mean, cov);
  return kernelMeansFor(m, toMat(points, m.d));
}

export function kernelMeansFor(m: KernelMeasure, U: Mat): Float64Array {
  const out = new Float64Array(U.rows);
  for (let j = 0; j < U.rows; j++) out[j] = kernelMeanAt(m, U.data.subarray(j * m.d, (j + 1) * m.d)).t;
  return out;
}

/** Integral prior variance R = ∫∫ k(x, x') dν(x) dν(x') = s·sqrt(det Λ / det(Λ + 2Σ)). */
export function integralPriorVariance(hyper: GpHyper, cov: CovInput): number {
  const d = hyper.lengthscales.length;
  const { L } = cholesky(plusLambda(covMat(cov, d), hyper.lengthscales, 2));
  return Math.exp(Math.log(hyper.outputscale) + 0.5 * (logDetLambda(hyper.lengthscales) - logDetFromChol(L)));
}
