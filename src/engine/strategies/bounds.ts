/**
 * The study's box in internal coordinates, as the strategies that keep their search distribution
 * in it see it (InitSpec.box, stored in the state): the ProbNES methods (docs/ALGORITHM.md §22) and
 * XNES and SNES (§6). Points are projected onto the bounds by the domain either way; these keep the
 * distribution itself from leaving the box, where every point would be projected onto one face.
 */

/** Bounds per coordinate in internal coordinates; null: unbounded on that side. */
export interface Bounds {
  lower: (number | null)[];
  upper: (number | null)[];
}

/**
 * μ projected onto the study's box (ProbNES option `mean_in_bounds`, docs/ALGORITHM.md §22; XNES
 * and SNES always, §6). A linear or weakly curved fitted mean extrapolates: on a slope whose
 * minimum is on the boundary the mean step walks μ arbitrarily far outside, every point drawn is
 * then projected onto the same face, and the model, fitted on projected points, stops informing
 * the search.
 */
export function clampToBounds(mean: number[], bounds: Bounds): number[] {
  return mean.map((m, i) => {
    const lo = bounds.lower[i], hi = bounds.upper[i];
    return Math.min(hi ?? Infinity, Math.max(lo ?? -Infinity, m));
  });
}

/**
 * Σ limited to the study's box (option `cov_in_bounds`; docs/ALGORITHM.md §22): Σ' = DΣD with
 * D_ii = min(1, w_i/√Σ_ii), w_i = u_i − l_i the width of a coordinate bounded on both sides (D_ii = 1
 * otherwise). Each marginal standard deviation is then at most its width, correlations are unchanged,
 * and Σ' stays positive definite (a congruence with a positive diagonal D). Only a distribution far
 * wider than the box is touched: the prior and every ordinary step are well inside it.
 */
export function limitCovToBounds(cov: number[][], bounds: Bounds): number[][] {
  const D = cov.map((row, i) => {
    const lo = bounds.lower[i], hi = bounds.upper[i];
    if (lo === null || hi === null || !(row[i] > 0)) return 1;
    return Math.min(1, (hi - lo) / Math.sqrt(row[i]));
  });
  if (D.every((v) => v === 1)) return cov;
  return cov.map((row, i) => row.map((v, j) => D[i] * v * D[j]));
}

/** The stored form of InitSpec.box: ±∞ (an unbounded side) as null, so the state stays plain JSON. */
export function storedBounds(box: { lower: number[]; upper: number[] } | null | undefined): Bounds | null {
  if (!box) return null;
  const finite = (v: number) => (Number.isFinite(v) ? v : null);
  return { lower: box.lower.map(finite), upper: box.upper.map(finite) };
}

/** The inverse of storedBounds: ±∞ for an unbounded side (the form Powell's steps take, powell-model.ts Box). */
export function boxOfBounds(bounds: Bounds | null): { lower: number[]; upper: number[] } | null {
  if (!bounds) return null;
  return { lower: bounds.lower.map((v) => v ?? -Infinity), upper: bounds.upper.map((v) => v ?? Infinity) };
}
