/** Checks on user-supplied covariances (validation reports a failure; the engine's guards repair). */
import { fromRows, tryCholesky } from '../../engine/index.js';

/** Positive definite, with pivots not lost to rounding (relative threshold 1e-12 of the diagonal). */
export function isPositiveDefinite(a: readonly (readonly number[])[]): boolean {
  return tryCholesky(fromRows(a), 1e-12) !== null;
}

/** Symmetric up to a relative tolerance: |a_ij − a_ji| ≤ tol·√(a_ii·a_jj). */
export function isNearlySymmetric(a: readonly (readonly number[])[], tol = 1e-8): boolean {
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < i; j++) {
      const scale = Math.sqrt(Math.abs(a[i]![i]! * a[j]![j]!));
      if (Math.abs(a[i]![j]! - a[j]![i]!) > tol * scale) return false;
    }
  }
  return true;
}
