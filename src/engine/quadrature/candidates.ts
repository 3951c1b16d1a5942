/**
 * Per-candidate-point terms of the batch acquisition (ALGORITHM.md §5, fast form), computed for all
 * candidate points of all batches at once.
 *
 * Glossary: n_A active inputs U_A (n_A×d) with K_AA = L_A L_Aᵀ, v = K_AA⁻¹ τ_A (n_A); m candidate
 * points P (m×d). For each point b: k_b = k(U_A, b) (n_A), w_b = L_A⁻¹ k_b (n_A) and the residual
 * τ_b − k_bᵀ v. Then (K_BA K_AA⁻¹ K_AB)_{bb'} = w_bᵀ w_b'.
 *
 * The triangular solves dominate (m·n_A²/2 multiply-adds: 34 M for 1000 batches of 3 at n_A = 151).
 * They run four right-hand sides at a time, interleaved (lane c of group g at W[(g·n_A + k)·4 + c]),
 * and two rows of L_A at a time: eight independent accumulators share each load, ~1.3× faster in V8
 * than six single-row lanes and ~3× faster than one solve at a time. Every entry is still the sum of
 * forward substitution in ascending k, so the result is bit-for-bit that of `solveLower`.
 */
import type { Mat } from '../linalg/index.js';
import type { GpHyper } from '../gp/types.js';
import { inverseSquaredLengthscales, scaledSqDistRow } from '../gp/kernel.js';
import type { KernelMeasure } from './measure.js';

const LANES = 4;

export interface CandidateTerms {
  nA: number;
  /** Interleaved w_b vectors, see the header. */
  W: Float64Array;
  /** τ_b − k_bᵀ v per point (m). */
  resid: Float64Array;
}

/** Offset of w_b[0] in W and the stride between its entries is LANES. */
export function wOffset(nA: number, p: number): number {
  return ((p / LANES) | 0) * nA * LANES + (p % LANES);
}

/** w_pᵀ w_p' for two candidate points. */
export function wDot(t: CandidateTerms, p: number, p2: number): number {
  const a = wOffset(t.nA, p), b = wOffset(t.nA, p2), W = t.W;
  let s = 0;
  for (let k = 0; k < t.nA; k++) s += W[a + k * LANES] * W[b + k * LANES];
  return s;
}

/** L x = b in place for four interleaved right-hand sides B[off + k·4 + c], rows i and i + 1 together. */
function solveLower4(L: Mat, B: Float64Array, off: number): void {
  const n = L.rows, l = L.data;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    const ri = i * n, rj = ri + n, o = off + i * LANES, p = o + LANES;
    let a0 = B[o], a1 = B[o + 1], a2 = B[o + 2], a3 = B[o + 3];
    let b0 = B[p], b1 = B[p + 1], b2 = B[p + 2], b3 = B[p + 3];
    for (let k = 0; k < i; k++) {
      const x = l[ri + k], y = l[rj + k], q = off + k * LANES;
      const c0 = B[q], c1 = B[q + 1], c2 = B[q + 2], c3 = B[q + 3];
      a0 -= x * c0; a1 -= x * c1; a2 -= x * c2; a3 -= x * c3;
      b0 -= y * c0; b1 -= y * c1; b2 -= y * c2; b3 -= y * c3;
    }
    const inv = 1 / l[ri + i];
    a0 *= inv; a1 *= inv; a2 *= inv; a3 *= inv;
    B[o] = a0; B[o + 1] = a1; B[o + 2] = a2; B[o + 3] = a3;
    // Row i + 1's last term (k = i) needs row i's solution, so it comes last, as in the plain order.
    const y = l[rj + i], inv2 = 1 / l[rj + i + 1];
    B[p] = (b0 - y * a0) * inv2; B[p + 1] = (b1 - y * a1) * inv2;
    B[p + 2] = (b2 - y * a2) * inv2; B[p + 3] = (b3 - y * a3) * inv2;
  }
  if (i < n) {
    const ri = i * n, o = off + i * LANES;
    let s0 = B[o], s1 = B[o + 1], s2 = B[o + 2], s3 = B[o + 3];
    for (let k = 0; k < i; k++) {
      const x = l[ri + k], q = off + k * LANES;
      s0 -= x * B[q]; s1 -= x * B[q + 1]; s2 -= x * B[q + 2]; s3 -= x * B[q + 3];
    }
    const inv = 1 / l[ri + i];
    B[o] = s0 * inv; B[o + 1] = s1 * inv; B[o + 2] = s2 * inv; B[o + 3] = s3 * inv;
  }
}

/**
 * The kernel mean τ_b = exp(logPeak − ½‖L_S⁻¹(b − μ)‖²) (measure.ts `kernelMeanAt`, same arithmetic)
 * with caller-owned scratch `z` (d) instead of two allocations per point.
 */
function kernelMeanInto(m: KernelMeasure, P: Float64Array, at: number, z: Float64Array): number {
  const d = m.d, l = m.LS.data, mu = m.mean;
  let q = 0;
  for (let i = 0; i < d; i++) {
    let s = P[at + i] - mu[i];
    const ri = i * d;
    for (let k = 0; k < i; k++) s -= l[ri + k] * z[k];
    const zi = s / l[ri + i];
    z[i] = zi;
  }
  for (let i = 0; i < d; i++) q += z[i] * z[i];
  return Math.exp(m.logPeak - 0.5 * q);
}

export function candidateTerms(U: Mat, L: Mat, v: Float64Array, hyper: GpHyper, measure: KernelMeasure, P: Mat): CandidateTerms {
  const nA = U.rows, d = U.cols, m = P.rows, s = hyper.outputscale, pts = P.data;
  const invL2 = inverseSquaredLengthscales(hyper.lengthscales);
  const groups = Math.ceil(m / LANES);
  const W = new Float64Array(groups * nA * LANES); // padding lanes stay 0 and solve to 0
  const resid = new Float64Array(m);
  const z = new Float64Array(d);
  for (let p = 0; p < m; p++) {
    const b = p * d;
    const o = wOffset(nA, p);
    // k_b = s·exp(−½ D) into b's lane of W (the distances first, then in place).
    scaledSqDistRow(pts, b, U, 0, nA, invL2, W, o, LANES);
    let kv = 0;
    for (let j = 0; j < nA; j++) {
      const kb = s * Math.exp(-0.5 * W[o + j * LANES]);
      W[o + j * LANES] = kb;
      kv += kb * v[j];
    }
    resid[p] = kernelMeanInto(measure, pts, b, z) - kv;
  }
  for (let g = 0; g < groups; g++) solveLower4(L, W, g * nA * LANES);
  return { nA, W, resid };
}
