/**
 * ProbNES data preparation: the active set and the standardisation of y (ALGORITHM.md §1 steps 1–2).
 *
 * Glossary (shapes): d = dimension, n = |history|; mean μ (d), cov Σ (d×d); u_j (d) the internal
 * inputs; A ⊆ {0..n−1} the active set (indices into history, ascending); q = batch size.
 */
import { cholesky, fromRows, mahalanobisSq } from '../linalg/index.js';
import { chiSquareQuantile } from '../random/index.js';
import type { Observation } from './types.js';

/**
 * A = { j : (u_j − μ)ᵀ Σ⁻¹ (u_j − μ) < χ²_d(quantile) } (squared distance, strict <; the paper's
 * text compares the unsquared one, a slip). When |A| < q, the nearest outside points are added
 * until |A| ≥ min(q, n), so the GP always has at least a batch worth of data. `enabled = false`
 * (ablation "active set off") uses every point. Returned indices are ascending.
 */
export function activeSet(
  history: readonly Observation[],
  mean: number[],
  cov: number[][],
  opts: { enabled: boolean; quantile: number; minSize: number },
): number[] {
  const n = history.length;
  if (!opts.enabled) return Array.from({ length: n }, (_, j) => j);
  if (n === 0) return [];
  const L = cholesky(fromRows(cov)).L;
  const d2 = history.map((o) => mahalanobisSq(L, o.x, mean));
  const threshold = chiSquareQuantile(opts.quantile, mean.length);
  const inside = new Set<number>();
  for (let j = 0; j < n; j++) if (d2[j] < threshold) inside.add(j);
  const need = Math.min(opts.minSize, n);
  if (inside.size < need) {
    // Nearest first; ties broken by history order so the set is deterministic.
    const outside = d2.map((v, j) => j).filter((j) => !inside.has(j)).sort((a, b) => d2[a] - d2[b] || a - b);
    for (const j of outside) {
      if (inside.size >= need) break;
      inside.add(j);
    }
  }
  return [...inside].sort((a, b) => a - b);
}

export interface Standardised {
  /** (y − yMean)/yStd for each value, in the input order. */
  z: number[];
  yMean: number;
  yStd: number;
}

/**
 * ỹ = (y − mean)/std over the active set only (ALGORITHM.md §1 step 2): unbiased std; a single
 * point or std < 1e-9 gives std = 1 (so constant data stays finite instead of dividing by ~0).
 */
export function standardise(y: readonly number[]): Standardised {
  const n = y.length;
  if (n === 0) return { z: [], yMean: 0, yStd: 1 };
  const yMean = y.reduce((s, v) => s + v, 0) / n;
  let yStd = 1;
  if (n > 1) {
    const ss = y.reduce((s, v) => s + (v - yMean) * (v - yMean), 0);
    const sd = Math.sqrt(ss / (n - 1));
    yStd = sd < 1e-9 || !Number.isFinite(sd) ? 1 : sd;
  }
  return { z: y.map((v) => (v - yMean) / yStd), yMean, yStd };
}
