/**
 * ARD squared-exponential kernel (ALGORITHM.md §2).
 *
 * Glossary: n, m = numbers of points, d = dimension. A: n×d, B: m×d (Mat, row-major).
 * ℓ (d) lengthscales, Λ = diag(ℓ²), s outputscale, σ²_n noise.
 * k(u, u') = s·exp(−½ (u − u')ᵀ Λ⁻¹ (u − u')) = θ·N(u; u', Λ) with θ = s·(2π)^{d/2}·Πℓ_i
 * (the paper's form, Appendix B "Quadrature", Corollary 1).
 */
import { InvalidInputError } from '../errors.js';
import { type Mat, fromRows, zeros } from '../linalg/index.js';
import type { GpHyper } from './types.js';

/** Accepts points as number[][] (JSON) or Mat; always returns a Mat with `d` columns. */
export function toMat(points: ArrayLike<ArrayLike<number>> | Mat, d?: number): Mat {
  const M = 'data' in points && 'rows' in points ? (points as Mat) : fromRows(points as ArrayLike<ArrayLike<number>>);
  if (d !== undefined && M.rows > 0 && M.cols !== d) throw new InvalidInputError(`points have dimension ${M.cols}, expected ${d}`);
  return M;
}

/** 1/ℓ_i², the form every distance below needs. */
export function inverseSquaredLengthscales(lengthscales: ArrayLike<number>): Float64Array {
  const out = new Float64Array(lengthscales.length);
  for (let i = 0; i < out.length; i++) out[i] = 1 / (lengthscales[i] * lengthscales[i]);
  return out;
}

/**
 * The one loop over scaled squared distances D_j = (a − b_j)ᵀ Λ⁻¹ (a − b_j) of a point a (row `ai` of
 * `a`, d columns) to the rows j0 … j1 − 1 of B; D_j goes to out[o + (j − j0)·stride]. `w` = 1/ℓ²
 * (`inverseSquaredLengthscales`). Every kernel evaluation in the engine goes through here. Four rows
 * at a time: each distance is still summed over the dimensions in order (so the value does not depend
 * on the tiling), but four independent sums hide the add latency that one running sum waits on
 * (~1.5–2× at d ≥ 10).
 */
export function scaledSqDistRow(
  a: Float64Array, ai: number, B: Mat, j0: number, j1: number, w: Float64Array, out: Float64Array, o: number, stride: number,
): void {
  const d = B.cols, b = B.data;
  let j = j0, at = o;
  for (; j + 3 < j1; j += 4, at += 4 * stride) {
    const b0 = j * d, b1 = b0 + d, b2 = b1 + d, b3 = b2 + d;
    let r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    for (let k = 0; k < d; k++) {
      const x = a[ai + k], wk = w[k];
      const t0 = x - b[b0 + k], t1 = x - b[b1 + k], t2 = x - b[b2 + k], t3 = x - b[b3 + k];
      r0 += t0 * t0 * wk;
      r1 += t1 * t1 * wk;
      r2 += t2 * t2 * wk;
      r3 += t3 * t3 * wk;
    }
    out[at] = r0;
    out[at + stride] = r1;
    out[at + 2 * stride] = r2;
    out[at + 3 * stride] = r3;
  }
  for (; j < j1; j++, at += stride) {
    const bj = j * d;
    let r = 0;
    for (let k = 0; k < d; k++) {
      const t = a[ai + k] - b[bj + k];
      r += t * t * w[k];
    }
    out[at] = r;
  }
}

/** n×m matrix of scaled squared distances D_ij = (a_i − b_j)ᵀ Λ⁻¹ (a_i − b_j). */
export function scaledSqDist(A: Mat, B: Mat, lengthscales: ArrayLike<number>): Mat {
  const d = A.cols;
  if (B.cols !== d || lengthscales.length !== d) throw new InvalidInputError('scaledSqDist: dimensions differ');
  const w = inverseSquaredLengthscales(lengthscales);
  const D = zeros(A.rows, B.rows);
  for (let i = 0; i < A.rows; i++) scaledSqDistRow(A.data, i * d, B, 0, B.rows, w, D.data, i * B.rows, 1);
  return D;
}

/** Cross-kernel matrix s·exp(−½ D): n×m, no noise. */
export function rbfCross(A: Mat, B: Mat, hyper: Pick<GpHyper, 'lengthscales' | 'outputscale'>): Mat {
  const D = scaledSqDist(A, B, hyper.lengthscales);
  const s = hyper.outputscale;
  for (let i = 0; i < D.data.length; i++) D.data[i] = s * Math.exp(-0.5 * D.data[i]);
  return D;
}

/**
 * K = s·RBF(X, X) + σ²_n I + diag(known) (exactly symmetric: only the upper half is computed). `known`:
 * per-point noise variances reported with the data (a value's standard error squared, in the targets'
 * units), on top of the learned σ²_n; absent, K is the paper's.
 */
export function kernelMatrix(X: Mat, hyper: GpHyper, known: KnownNoise = null): Mat {
  const K = zeros(X.rows, X.rows);
  kernelMatrixInto(X, hyper, K.data, known);
  return K;
}

/** Per-point known noise variances (n, ≥ 0) added to K's diagonal, or null for none. */
export type KnownNoise = ArrayLike<number> | null | undefined;

/**
 * `kernelMatrix` into a caller-owned n×n buffer (the GP fit rebuilds K at every evaluation): the
 * distances of row i to the rows j > i land in row i's upper part, which then becomes s·exp(−½ D)
 * and is mirrored below the diagonal.
 */
export function kernelMatrixInto(X: Mat, hyper: GpHyper, k: Float64Array, known: KnownNoise = null): void {
  const n = X.rows, d = X.cols;
  const w = inverseSquaredLengthscales(hyper.lengthscales);
  const x = X.data, s = hyper.outputscale;
  for (let i = 0; i < n; i++) {
    const ki = i * n;
    k[ki + i] = known ? s + hyper.noise + known[i] : s + hyper.noise;
    scaledSqDistRow(x, i * d, X, i + 1, n, w, k, ki + i + 1, 1);
    for (let j = i + 1; j < n; j++) {
      const v = s * Math.exp(-0.5 * k[ki + j]);
      k[ki + j] = v;
      k[j * n + i] = v;
    }
  }
}

/** log θ = log s + (d/2) log 2π + Σ log ℓ_i (computed in log space: Πℓ_i overflows for large d). */
export function logThetaFromHyper(hyper: Pick<GpHyper, 'lengthscales' | 'outputscale'>): number {
  let s = Math.log(hyper.outputscale) + 0.5 * hyper.lengthscales.length * Math.log(2 * Math.PI);
  for (const l of hyper.lengthscales) s += Math.log(l);
  return s;
}

/** The paper's kernel weight θ = s·(2π)^{d/2}·Πℓ_i, so that k(u, u') = θ·N(u; u', Λ). */
export function thetaFromHyper(hyper: Pick<GpHyper, 'lengthscales' | 'outputscale'>): number {
  return Math.exp(logThetaFromHyper(hyper));
}
