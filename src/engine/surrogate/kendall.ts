/**
 * Kendall's rank correlation τ_b (Kendall 1945, "The treatment of ties in ranking problems";
 * the variant scipy.stats.kendalltau computes by default):
 *
 *   τ_b = (n_c − n_d) / √((n₀ − n₁)(n₀ − n₂)),
 *
 * n₀ = n(n − 1)/2 pairs, n_c / n_d the concordant / discordant pairs (a pair tied in a or in b is
 * neither), n₁ / n₂ the pairs tied in a / in b. Without ties it is Kendall's τ_a. O(n²): lq-CMA-ES
 * compares at most a few dozen values.
 */
import { InvalidInputError } from '../errors.js';

/** τ_b of two equally long sequences; 0 when either is constant (no ranking to compare) or n < 2. */
export function kendallTau(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new InvalidInputError(`kendallTau: lengths differ (${a.length} ≠ ${b.length})`);
  const n = a.length;
  let s = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 1; i < n; i++) {
    for (let j = 0; j < i; j++) {
      const da = Math.sign(a[i] - a[j]);
      const db = Math.sign(b[i] - b[j]);
      if (da === 0) tiesA++;
      if (db === 0) tiesB++;
      s += da * db;
    }
  }
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - tiesA) * (n0 - tiesB));
  return denom > 0 ? s / denom : 0;
}
