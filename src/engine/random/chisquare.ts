/**
 * χ²_k quantile, used to bound the active set (ALGORITHM.md §1: squared Mahalanobis distance
 * against χ²_d(0.9973)). From @stdlib (a maintained, tested implementation of the inverse
 * regularised incomplete gamma function) rather than hand-written.
 */
import quantile from '@stdlib/stats-base-dists-chisquare-quantile';

export function chiSquareQuantile(p: number, k: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`chi-square quantile needs 0 < p < 1, got ${p}`);
  if (!(k > 0 && Number.isFinite(k))) throw new RangeError(`chi-square quantile needs k > 0, got ${k}`);
  return quantile(p, k);
}
