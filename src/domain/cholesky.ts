/**
 * A plain Cholesky factorisation used only to *validate* a user-supplied covariance (is it
 * positive definite?). The engine has its own guarded version with jitter (engine/linalg); here a
 * failure must be reported, not repaired.
 */

/** Lower-triangular L with A = L Lᵀ, or null when A is not (numerically) positive definite. */
export function cholesky(a: readonly (readonly number[])[]): number[][] | null {
  const n = a.length;
  const l: number[][] = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let j = 0; j < n; j++) {
    let d = a[j]![j]!;
    for (let k = 0; k < j; k++) d -= l[j]![k]! ** 2;
    // Relative threshold: a pivot lost to rounding against the original diagonal is not "positive".
    if (!(d > 1e-12 * Math.abs(a[j]![j]!)) || !Number.isFinite(d)) return null;
    const ljj = Math.sqrt(d);
    l[j]![j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = a[i]![j]!;
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!;
      l[i]![j] = s / ljj;
    }
  }
  return l;
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
