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

/** n×m matrix of scaled squared distances D_ij = (a_i − b_j)ᵀ Λ⁻¹ (a_i − b_j). */
export function scaledSqDist(A: Mat, B: Mat, lengthscales: ArrayLike<number>): Mat {
  const d = A.cols;
  if (B.cols !== d || lengthscales.length !== d) throw new InvalidInputError('scaledSqDist: dimensions differ');
  const w = inverseSquaredLengthscales(lengthscales);
  const D = zeros(A.rows, B.rows);
  const a = A.data, b = B.data, out = D.data;
  for (let i = 0; i < A.rows; i++) {
    const ai = i * d, oi = i * B.rows;
    for (let j = 0; j < B.rows; j++) {
      const bj = j * d;
      let s = 0;
      for (let k = 0; k < d; k++) {
        const t = a[ai + k] - b[bj + k];
        s += t * t * w[k];
      }
      out[oi + j] = s;
    }
  }
  return D;
}

/** Cross-kernel matrix s·exp(−½ D): n×m, no noise. */
export function rbfCross(A: Mat, B: Mat, hyper: Pick<GpHyper, 'lengthscales' | 'outputscale'>): Mat {
  const D = scaledSqDist(A, B, hyper.lengthscales);
  const s = hyper.outputscale;
  for (let i = 0; i < D.data.length; i++) D.data[i] = s * Math.exp(-0.5 * D.data[i]);
  return D;
}

/** K = s·RBF(X, X) + σ²_n I (exactly symmetric: only the upper half is computed). */
export function kernelMatrix(X: Mat, hyper: GpHyper): Mat {
  const K = zeros(X.rows, X.rows);
  kernelMatrixInto(X, hyper, K.data);
  return K;
}

/** `kernelMatrix` into a caller-owned n×n buffer (the GP fit rebuilds K at every evaluation). */
export function kernelMatrixInto(X: Mat, hyper: GpHyper, k: Float64Array): void {
  const n = X.rows, d = X.cols;
  const w = inverseSquaredLengthscales(hyper.lengthscales);
  const x = X.data, s = hyper.outputscale;
  for (let i = 0; i < n; i++) {
    k[i * n + i] = s + hyper.noise;
    for (let j = i + 1; j < n; j++) {
      let r = 0;
      for (let c = 0; c < d; c++) {
        const t = x[i * d + c] - x[j * d + c];
        r += t * t * w[c];
      }
      const v = s * Math.exp(-0.5 * r);
      k[i * n + j] = v;
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
