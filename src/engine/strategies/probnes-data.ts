/**
 * ProbNES data preparation: the active set and the standardisation of y (ALGORITHM.md §1 steps 1–2).
 *
 * Glossary (shapes): d = dimension, n = |history|; mean μ (d), cov Σ (d×d); u_j (d) the internal
 * inputs; A ⊆ {0..n−1} the active set (indices into history, ascending); q = batch size.
 */
import { cholesky, fromRows, type Mat } from '../linalg/index.js';
import { chiSquareQuantile } from '../random/index.js';
import type { Observation, PackedHistory } from './types.js';

/**
 * A = { j : (u_j − μ)ᵀ Σ⁻¹ (u_j − μ) < χ²_d(quantile) } (squared distance, strict <; the paper's
 * text compares the unsquared one, a slip). When |A| < q, the nearest outside points are added
 * until |A| ≥ min(q, n), so the GP always has at least a batch worth of data. When `maxSize` > 0
 * (default profile: `active_set_cap`) and |A| > maxSize, only the maxSize nearest points are kept,
 * so the GP fit's O(|A|³) cost per generation stays bounded however long the study runs. `enabled =
 * false` (ablation "active set off") uses every point. Nearest = smallest squared Mahalanobis
 * distance, ties broken by history order. Returned indices are ascending.
 */
export function activeSet(
  history: readonly Observation[],
  mean: number[],
  cov: number[][],
  opts: { enabled: boolean; quantile: number; minSize: number; maxSize?: number },
  packed?: PackedHistory | null,
): number[] {
  const n = history.length;
  if (!opts.enabled) return Array.from({ length: n }, (_, j) => j);
  if (n === 0) return [];
  const L = cholesky(fromRows(cov)).L;
  const d2 = packed && packedMatches(packed, n, mean.length) ? mahalanobisSqPacked(L, packed.x, n, mean) : mahalanobisSqAll(L, history, mean);
  // The option accepts quantile = 1 (PROBNES_OPTIONS: (0.5, 1]), whose χ² quantile is +∞: every point
  // is inside. chiSquareQuantile demands p < 1 and threw, which failed every update of the study.
  const threshold = opts.quantile >= 1 ? Infinity : chiSquareQuantile(opts.quantile, mean.length);
  const inside: number[] = [];
  for (let j = 0; j < n; j++) if (d2[j] < threshold) inside.push(j);
  const need = Math.min(opts.minSize, n);
  const cap = opts.maxSize ?? 0;
  if (inside.length >= need && !(cap > 0 && inside.length > Math.max(cap, need))) return inside;
  // Too few inside: the nearest need points (the inside ones are among them); too many: the nearest
  // max(cap, need), which are all inside since they are nearer than any outside point.
  const keep = inside.length < need ? need : Math.max(cap, need);
  return nearestIndices(d2, keep);
}

/**
 * mahalanobisSq(L, o.x, mean) of every observation, bit for bit: the history packed row by row,
 * then mahalanobisSqPacked (the same forward substitution, one row at a time, which solveLower's
 * blocked loop equals), without two arrays and two calls per point.
 */
export function mahalanobisSqAll(L: Mat, history: readonly Observation[], mean: number[]): Float64Array {
  const d = L.rows;
  const xs = new Float64Array(history.length * d);
  for (let j = 0; j < history.length; j++) {
    const x = history[j].x;
    for (let i = 0; i < d; i++) xs[j * d + i] = x[i];
  }
  return mahalanobisSqPacked(L, xs, history.length, mean);
}

/** Whether `packed` has the sizes of a history of n points of dimension d (a caller's packing is trusted beyond that). */
export function packedMatches(packed: PackedHistory, n: number, d: number): boolean {
  return packed.y.length === n && packed.x.length === n * d;
}

/**
 * (x_j − μ)ᵀ Σ⁻¹ (x_j − μ) of every row of a packed history (x[j·d + i]), Σ = LLᵀ: one flat array
 * instead of an object and an array per point, as every update scans the whole history (100,000
 * points in a long study).
 */
export function mahalanobisSqPacked(L: Mat, xs: Float64Array, n: number, mean: number[]): Float64Array {
  const d = L.rows;
  const l = L.data;
  const z = new Float64Array(d);
  const m = Float64Array.from(mean);
  const out = new Float64Array(n);
  for (let j = 0, base = 0; j < n; j++, base += d) {
    for (let i = 0; i < d; i++) {
      let s = xs[base + i] - m[i];
      const ri = i * d;
      for (let k = 0; k < i; k++) s -= l[ri + k] * z[k];
      z[i] = s / l[ri + i];
    }
    let s2 = 0;
    for (let i = 0; i < d; i++) s2 += z[i] * z[i];
    out[j] = s2;
  }
  return out;
}

/**
 * The `keep` indices with the smallest d2 (ties: the smaller index), ascending: what sorting every
 * index by (d2, index) and taking the first `keep` gives, in O(n log keep) with a max-heap of the
 * `keep` nearest so far instead of O(n log n): a study of 100,000 results sorted them all on every update.
 */
export function nearestIndices(d2: ArrayLike<number>, keep: number): number[] {
  const n = d2.length;
  if (keep >= n) return Array.from({ length: n }, (_, j) => j);
  // after(a, b): a comes after b in (d2, index) order. heap[0] is the farthest of those kept.
  const after = (a: number, b: number) => d2[a] > d2[b] || (d2[a] === d2[b] && a > b);
  const heap: number[] = [];
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && after(heap[l], heap[top])) top = l;
      if (r < heap.length && after(heap[r], heap[top])) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top], heap[i]];
      i = top;
    }
  };
  for (let j = 0; j < n; j++) {
    if (heap.length < keep) {
      heap.push(j);
      for (let i = heap.length - 1; i > 0; ) {
        const p = (i - 1) >> 1;
        if (!after(heap[i], heap[p])) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    } else if (keep > 0 && after(heap[0], j)) {
      heap[0] = j;
      down(0);
    }
  }
  return heap.sort((a, b) => a - b);
}

export interface Standardised {
  /** ỹ = (y − yMean)/yStd for each value, in the input order. */
  yTilde: number[];
  yMean: number;
  yStd: number;
}

/**
 * ỹ = (y − mean)/std over the active set only (ALGORITHM.md §1 step 2): unbiased std; a single
 * point or std < 1e-9 gives std = 1 (so constant data stays finite instead of dividing by ~0).
 *
 * Computed on y / 2^k with 2^k ≥ max|y|, so that finite values near the top of the double range
 * (a 1e200 objective, or values spread from −1e308 to 1e308) cannot overflow the sum or the
 * squares: before, (y − mean)² became ∞ and every GP fit failed, which left the study retrying a
 * failing update forever. Dividing by a power of two is exact, so on ordinary data ỹ, mean and
 * std are bit for bit what the direct formulas give. std saturates at Number.MAX_VALUE when the
 * spread itself exceeds the double range (ỹ stays exact; only y-unit figures saturate).
 */
export function standardise(y: readonly number[]): Standardised {
  const n = y.length;
  if (n === 0) return { yTilde: [], yMean: 0, yStd: 1 };
  // Identical values carry no information: ỹ = 0 exactly. Computed, Σy/n differs from the common
  // value by rounding, and those ~1e-16 deviations were fitted as signal, so a constant objective
  // moved the mean by up to 1e-7 over a dozen generations instead of leaving it where it was.
  if (y.every((v) => v === y[0])) return { yTilde: y.map(() => 0), yMean: y[0], yStd: 1 };
  const top = y.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  // 2^k with k in the normal exponent range, so the scale itself is finite and normal.
  const k = top > 0 ? Math.min(1023, Math.max(-1022, Math.ceil(Math.log2(top)))) : 0;
  const scale = 2 ** k;
  const ys = y.map((v) => v / scale);
  const m = ys.reduce((s, v) => s + v, 0) / n;
  let sdScaled = 0;
  if (n > 1) sdScaled = Math.sqrt(ys.reduce((s, v) => s + (v - m) * (v - m), 0) / (n - 1));
  const yMean = m * scale;
  const sd = sdScaled * scale;
  if (n === 1 || !(sd >= 1e-9)) return { yTilde: ys.map((v) => (v - m) * scale), yMean, yStd: 1 };
  return { yTilde: ys.map((v) => (v - m) / sdScaled), yMean, yStd: Math.min(sd, Number.MAX_VALUE) };
}
