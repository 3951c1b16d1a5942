/**
 * Cholesky factorisation with escalating jitter, triangular solves and log-determinants.
 *
 * ARCHITECTURE.md rule 5: the numerical guards live here once. Kernel matrices with duplicated
 * inputs (a stalled mean evaluated twice) are singular up to the noise term; the jitter ladder
 * (1e-10 … 1e-2 times the mean diagonal) rescues them, and anything worse is a typed
 * `NotPositiveDefinite`, never a NaN.
 */
import { NotPositiveDefinite } from '../errors.js';
import { type Mat, type Vec, zeros } from './matrix.js';

/**
 * Lower-triangular L with A = L Lᵀ, or null when A (as given, no jitter) is not positive definite.
 * `minPivotRatio` > 0 also rejects a pivot that rounding has reduced below that fraction of the
 * original diagonal entry (used to validate user covariances: numerically PD by accident is not PD).
 */
export function tryCholesky(A: Mat, minPivotRatio = 0): Mat | null {
  const n = A.rows;
  if (A.cols !== n) throw new RangeError('cholesky: matrix is not square');
  const L = zeros(n, n);
  const a = A.data, l = L.data;
  for (let j = 0; j < n; j++) {
    const rj = j * n;
    let s = a[rj + j];
    for (let k = 0; k < j; k++) s -= l[rj + k] * l[rj + k];
    if (!(s > minPivotRatio * Math.abs(a[rj + j])) || !(s > 0) || !Number.isFinite(s)) return null;
    const ljj = Math.sqrt(s);
    l[rj + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      const ri = i * n;
      let t = a[ri + j];
      for (let k = 0; k < j; k++) t -= l[ri + k] * l[rj + k];
      l[ri + j] = t / ljj;
    }
  }
  return L;
}

export interface CholeskyResult {
  /** Lower-triangular factor of A + jitter·I. */
  L: Mat;
  /** The diagonal jitter that was added (0 when none was needed). */
  jitter: number;
}

/**
 * Cholesky of a symmetric matrix, adding jitter·I with jitter = 1e-10·mean(diag A), ×10 per try,
 * up to `maxJitterRatio`·mean(diag A) (default 1e-2). Throws NotPositiveDefinite beyond that.
 */
export function cholesky(A: Mat, opts: { maxJitterRatio?: number } = {}): CholeskyResult {
  const direct = tryCholesky(A);
  if (direct) return { L: direct, jitter: 0 };
  const n = A.rows;
  let meanDiag = 0;
  for (let i = 0; i < n; i++) meanDiag += A.data[i * n + i];
  meanDiag /= Math.max(n, 1);
  if (!(meanDiag > 0) || !Number.isFinite(meanDiag)) {
    throw new NotPositiveDefinite(`cholesky: mean diagonal ${meanDiag} is not positive and finite`);
  }
  const maxRatio = opts.maxJitterRatio ?? 1e-2;
  for (let ratio = 1e-10; ratio <= maxRatio * (1 + 1e-12); ratio *= 10) {
    const jitter = ratio * meanDiag;
    const B = { rows: n, cols: n, data: A.data.slice() };
    for (let i = 0; i < n; i++) B.data[i * n + i] += jitter;
    const L = tryCholesky(B);
    if (L) return { L, jitter };
  }
  throw new NotPositiveDefinite(`cholesky: not positive definite even with jitter ${maxRatio}·mean(diag)`);
}

/** Solves L x = b for lower-triangular L. */
export function solveLower(L: Mat, b: ArrayLike<number>): Vec {
  const n = L.rows;
  const x = new Float64Array(n);
  const l = L.data;
  for (let i = 0; i < n; i++) {
    let s = b[i];
    const ri = i * n;
    for (let k = 0; k < i; k++) s -= l[ri + k] * x[k];
    x[i] = s / l[ri + i];
  }
  return x;
}

/** Solves Lᵀ x = b for lower-triangular L (back substitution on the transpose). */
export function solveLowerT(L: Mat, b: ArrayLike<number>): Vec {
  const n = L.rows;
  const x = Float64Array.from(b as ArrayLike<number>);
  const l = L.data;
  for (let i = n - 1; i >= 0; i--) {
    x[i] /= l[i * n + i];
    const xi = x[i];
    for (let k = 0; k < i; k++) x[k] -= l[i * n + k] * xi;
  }
  return x;
}

/** Solves (L Lᵀ) x = b. */
export function cholSolve(L: Mat, b: ArrayLike<number>): Vec {
  return solveLowerT(L, solveLower(L, b));
}

/** Solves L X = B column by column (B is n×m). */
export function solveLowerMat(L: Mat, B: Mat): Mat {
  const n = L.rows, m = B.cols;
  const X = { rows: n, cols: m, data: B.data.slice() };
  const l = L.data, x = X.data;
  for (let i = 0; i < n; i++) {
    const ri = i * n, xi = i * m;
    for (let k = 0; k < i; k++) {
      const lik = l[ri + k];
      if (lik === 0) continue;
      const xk = k * m;
      for (let j = 0; j < m; j++) x[xi + j] -= lik * x[xk + j];
    }
    const inv = 1 / l[ri + i];
    for (let j = 0; j < m; j++) x[xi + j] *= inv;
  }
  return X;
}

/** (L Lᵀ)⁻¹ B. */
export function cholSolveMat(L: Mat, B: Mat): Mat {
  const Y = solveLowerMat(L, B);
  const n = L.rows, m = B.cols;
  const l = L.data, y = Y.data;
  for (let i = n - 1; i >= 0; i--) {
    const inv = 1 / l[i * n + i];
    const yi = i * m;
    for (let j = 0; j < m; j++) y[yi + j] *= inv;
    for (let k = 0; k < i; k++) {
      const lik = l[i * n + k];
      if (lik === 0) continue;
      const yk = k * m;
      for (let j = 0; j < m; j++) y[yk + j] -= lik * y[yi + j];
    }
  }
  return Y;
}

/** (L Lᵀ)⁻¹ as a full symmetric matrix (needed by the marginal-likelihood gradient). */
export function cholInverse(L: Mat): Mat {
  const n = L.rows;
  const I = zeros(n, n);
  for (let i = 0; i < n; i++) I.data[i * n + i] = 1;
  return cholSolveMat(L, I);
}

/** log det(L Lᵀ) = 2 Σ log L_ii. */
export function logDetFromChol(L: Mat): number {
  let s = 0;
  for (let i = 0; i < L.rows; i++) s += Math.log(L.data[i * L.rows + i]);
  return 2 * s;
}

/** Squared Mahalanobis distance (x − m)ᵀ (L Lᵀ)⁻¹ (x − m) = ‖L⁻¹(x − m)‖². */
export function mahalanobisSq(L: Mat, x: ArrayLike<number>, m: ArrayLike<number>): number {
  const n = L.rows;
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) r[i] = x[i] - m[i];
  const z = solveLower(L, r);
  let s = 0;
  for (let i = 0; i < n; i++) s += z[i] * z[i];
  return s;
}

/** log N(x; m, L Lᵀ), computed through the factor (ALGORITHM.md §2: every density in log space). */
export function logMvnPdf(x: ArrayLike<number>, m: ArrayLike<number>, L: Mat): number {
  const d = L.rows;
  return -0.5 * (d * Math.log(2 * Math.PI) + logDetFromChol(L) + mahalanobisSq(L, x, m));
}

/**
 * (L Lᵀ)⁻¹ as a full symmetric matrix in ~n³/3 flops (vs ~n³ for `cholInverse`): form U = L⁻ᵀ
 * (upper, stored row-major so every inner loop is contiguous), then (L Lᵀ)⁻¹ = U Uᵀ by symmetric
 * halves. The GP marginal-likelihood gradient needs K⁻¹ once per objective evaluation. Both loops
 * work on two rows at once: two independent accumulators sharing one load run ~1.5× faster in V8.
 */
export function cholInverseSym(L: Mat): Mat {
  const n = L.rows;
  const u = lowerInverseRows(L);
  const out = zeros(n, n);
  const o = out.data;
  for (let a = 0; a < n; a++) {
    const ua = a * n;
    let b = a;
    for (; b + 1 < n; b += 2) {
      const ub = b * n, uc = ub + n;
      let s0 = u[ua + b] * u[ub + b], s1 = 0;
      for (let k = b + 1; k < n; k++) {
        const x = u[ua + k];
        s0 += x * u[ub + k];
        s1 += x * u[uc + k];
      }
      o[a * n + b] = s0; o[b * n + a] = s0;
      o[a * n + b + 1] = s1; o[(b + 1) * n + a] = s1;
    }
    if (b < n) {
      const v = u[ua + b] * u[b * n + b];
      o[a * n + b] = v; o[b * n + a] = v;
    }
  }
  return out;
}

/** Rows of L⁻ᵀ: u[j*n + i] = (L⁻¹)_{ij} for i ≥ j, computed two columns j, j+1 at a time. */
function lowerInverseRows(L: Mat): Float64Array {
  const n = L.rows, l = L.data;
  const u = new Float64Array(n * n);
  let j = 0;
  for (; j + 1 < n; j += 2) {
    const uj = j * n, uk = uj + n;
    u[uj + j] = 1 / l[j * n + j];
    u[uk + j + 1] = 1 / l[(j + 1) * n + j + 1];
    u[uj + j + 1] = -l[(j + 1) * n + j] * u[uj + j] * u[uk + j + 1];
    for (let i = j + 2; i < n; i++) {
      const li = i * n;
      let s0 = l[li + j] * u[uj + j], s1 = 0;
      for (let k = j + 1; k < i; k++) {
        const x = l[li + k];
        s0 += x * u[uj + k];
        s1 += x * u[uk + k];
      }
      const inv = 1 / l[li + i];
      u[uj + i] = -s0 * inv;
      u[uk + i] = -s1 * inv;
    }
  }
  if (j < n) u[j * n + j] = 1 / l[j * n + j];
  return u;
}
