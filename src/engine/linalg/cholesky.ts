/**
 * Cholesky factorisation with escalating jitter, triangular solves, log-determinants and the
 * Gaussian log-density through the factor. The explicit inverse (L Lᵀ)⁻¹ is in cholesky-inverse.ts.
 *
 * ARCHITECTURE.md rule 5: the numerical guards live here once. Kernel matrices with duplicated
 * inputs (a stalled mean evaluated twice) are singular up to the noise term; the jitter ladder
 * (1e-10 … 1e-2 times the mean diagonal) rescues them, and anything worse is a typed
 * `NotPositiveDefinite`, never a NaN.
 */
import { NotPositiveDefinite } from '../errors.js';
import { type Mat, type Vec, zeros } from './matrix.js';
import { solveLowerRowsInto, solveLowerTRowsInto, transposeInto } from './triangular.js';

/**
 * Lower-triangular L with A = L Lᵀ, or null when A (as given, no jitter) is not positive definite.
 * `minPivotRatio` > 0 also rejects a pivot that rounding has reduced below that fraction of the
 * original diagonal entry (used to validate user covariances: numerically PD by accident is not PD).
 */
export function tryCholesky(A: Mat, minPivotRatio = 0): Mat | null {
  const n = A.rows;
  if (A.cols !== n) throw new RangeError('cholesky: matrix is not square');
  const L = zeros(n, n);
  return tryCholeskyInto(A.data, n, L.data, minPivotRatio) ? L : null;
}

/**
 * The factorisation of `tryCholesky` from row-major `a` (n×n) into `l` (n×n, its upper triangle
 * is zeroed), without allocating: the GP fit refactorises one buffer at every objective evaluation.
 * Returns false when a pivot fails. Dot-product form (l_ij = (a_ij − Σ_{k<j} l_ik l_jk)/l_jj over
 * contiguous rows), two columns j, j+1 and four rows at a time: eight accumulators share six loads,
 * ~2.5× faster in V8 than one entry at a time. Every entry is the same sum in the same order (column
 * j+1's k = j term last, once column j is known), so the factor is bit-for-bit the plain loop's.
 */
export function tryCholeskyInto(a: Float64Array, n: number, l: Float64Array, minPivotRatio = 0): boolean {
  let j = 0;
  for (; j + 1 < n; j += 2) {
    const rj = j * n, rk = rj + n;
    let s = a[rj + j];
    for (let k = 0; k < j; k++) s -= l[rj + k] * l[rj + k];
    if (!setPivot(a, n, l, j, s, minPivotRatio)) return false;
    const ljj = l[rj + j];
    let t = a[rk + j];
    for (let k = 0; k < j; k++) t -= l[rk + k] * l[rj + k];
    const lkj = t / ljj;
    l[rk + j] = lkj;
    s = a[rk + j + 1];
    for (let k = 0; k <= j; k++) s -= l[rk + k] * l[rk + k];
    if (!setPivot(a, n, l, j + 1, s, minPivotRatio)) return false;
    const lkk = l[rk + j + 1];
    let i = j + 2;
    for (; i + 3 < n; i += 4) {
      const r0 = i * n, r1 = r0 + n, r2 = r1 + n, r3 = r2 + n;
      let t0 = a[r0 + j], t1 = a[r1 + j], t2 = a[r2 + j], t3 = a[r3 + j];
      let u0 = a[r0 + j + 1], u1 = a[r1 + j + 1], u2 = a[r2 + j + 1], u3 = a[r3 + j + 1];
      for (let k = 0; k < j; k++) {
        const x = l[rj + k], y = l[rk + k];
        const c0 = l[r0 + k], c1 = l[r1 + k], c2 = l[r2 + k], c3 = l[r3 + k];
        t0 -= c0 * x; t1 -= c1 * x; t2 -= c2 * x; t3 -= c3 * x;
        u0 -= c0 * y; u1 -= c1 * y; u2 -= c2 * y; u3 -= c3 * y;
      }
      t0 /= ljj; t1 /= ljj; t2 /= ljj; t3 /= ljj;
      l[r0 + j] = t0; l[r1 + j] = t1; l[r2 + j] = t2; l[r3 + j] = t3;
      l[r0 + j + 1] = (u0 - t0 * lkj) / lkk;
      l[r1 + j + 1] = (u1 - t1 * lkj) / lkk;
      l[r2 + j + 1] = (u2 - t2 * lkj) / lkk;
      l[r3 + j + 1] = (u3 - t3 * lkj) / lkk;
    }
    for (; i < n; i++) {
      const ri = i * n;
      let t0 = a[ri + j], u0 = a[ri + j + 1];
      for (let k = 0; k < j; k++) {
        const c = l[ri + k];
        t0 -= c * l[rj + k];
        u0 -= c * l[rk + k];
      }
      t0 /= ljj;
      l[ri + j] = t0;
      l[ri + j + 1] = (u0 - t0 * lkj) / lkk;
    }
  }
  if (j < n) {
    // The last column alone: only its pivot is left.
    const rj = j * n;
    let s = a[rj + j];
    for (let k = 0; k < j; k++) s -= l[rj + k] * l[rj + k];
    if (!setPivot(a, n, l, j, s, minPivotRatio)) return false;
  }
  return true;
}

/** l_jj = √s after the pivot test of `tryCholesky`; clears the rest of row j (its upper part). */
function setPivot(a: Float64Array, n: number, l: Float64Array, j: number, s: number, minPivotRatio: number): boolean {
  if (!(s > minPivotRatio * Math.abs(a[j * n + j])) || !(s > 0) || !Number.isFinite(s)) return false;
  l[j * n + j] = Math.sqrt(s);
  for (let k = j + 1; k < n; k++) l[j * n + k] = 0;
  return true;
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
  const n = A.rows;
  if (A.cols !== n) throw new RangeError('cholesky: matrix is not square');
  const L = zeros(n, n);
  const jitter = choleskyInto(A.data, n, L.data, new Float64Array(0), opts.maxJitterRatio);
  return { L, jitter };
}

/**
 * `cholesky` into caller-owned buffers: the factor of a + jitter·I goes to `l` and the jitter is
 * returned. `scratch` (n², or shorter to allocate one only if the ladder is needed) holds the
 * jittered copy of `a`. Throws NotPositiveDefinite beyond the ladder.
 */
export function choleskyInto(a: Float64Array, n: number, l: Float64Array, scratch: Float64Array, maxJitterRatio = 1e-2): number {
  if (tryCholeskyInto(a, n, l)) return 0;
  let meanDiag = 0;
  for (let i = 0; i < n; i++) meanDiag += a[i * n + i];
  meanDiag /= Math.max(n, 1);
  if (!(meanDiag > 0) || !Number.isFinite(meanDiag)) {
    throw new NotPositiveDefinite(`cholesky: mean diagonal ${meanDiag} is not positive and finite`);
  }
  const b = scratch.length >= n * n ? scratch : new Float64Array(n * n);
  for (let ratio = 1e-10; ratio <= maxJitterRatio * (1 + 1e-12); ratio *= 10) {
    const jitter = ratio * meanDiag;
    b.set(a.subarray(0, n * n));
    for (let i = 0; i < n; i++) b[i * n + i] += jitter;
    if (tryCholeskyInto(b, n, l)) return jitter;
  }
  throw new NotPositiveDefinite(`cholesky: not positive definite even with jitter ${maxJitterRatio}·mean(diag)`);
}

/**
 * Solves L x = b for lower-triangular L: x_i = (b_i − Σ_{k<i} l_ik x_k, k ascending) / l_ii.
 * Four rows at a time: their sums over k < i are four independent chains sharing each load of x_k
 * (one chain alone waits on the latency of every subtraction), then rows i+1 … i+3 add their
 * terms k = i … i+2 last, in order, once those x are known. Every x_i is the same sum in the same
 * order as the one-row loop, so the result is bit for bit the same (test/engine/linalg.test.ts).
 * The BO acquisition solves one such system per posterior evaluation: the profile of a BO run at
 * d = 5 to 250 evaluations put 45% of its time here (docs/BENCHMARKS.md, BBOB).
 */
export function solveLower(L: Mat, b: ArrayLike<number>): Vec {
  const n = L.rows;
  const x = new Float64Array(n);
  const l = L.data;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const r0 = i * n, r1 = r0 + n, r2 = r1 + n, r3 = r2 + n;
    let s0 = b[i], s1 = b[i + 1], s2 = b[i + 2], s3 = b[i + 3];
    for (let k = 0; k < i; k++) {
      const xk = x[k];
      s0 -= l[r0 + k] * xk;
      s1 -= l[r1 + k] * xk;
      s2 -= l[r2 + k] * xk;
      s3 -= l[r3 + k] * xk;
    }
    const x0 = s0 / l[r0 + i];
    x[i] = x0;
    s1 -= l[r1 + i] * x0;
    const x1 = s1 / l[r1 + i + 1];
    x[i + 1] = x1;
    s2 -= l[r2 + i] * x0;
    s2 -= l[r2 + i + 1] * x1;
    const x2 = s2 / l[r2 + i + 2];
    x[i + 2] = x2;
    s3 -= l[r3 + i] * x0;
    s3 -= l[r3 + i + 1] * x1;
    s3 -= l[r3 + i + 2] * x2;
    x[i + 3] = s3 / l[r3 + i + 3];
  }
  for (; i < n; i++) {
    let s = b[i];
    const ri = i * n;
    for (let k = 0; k < i; k++) s -= l[ri + k] * x[k];
    x[i] = s / l[ri + i];
  }
  return x;
}

/**
 * Solves Lᵀ x = b for lower-triangular L (back substitution on the transpose): for i descending,
 * x_i /= l_ii, then x_k −= l_ik x_i for every k < i. Two rows i, i−1 at a time: x_{i−1} takes row
 * i's term and is finished first, then every k < i−1 takes both terms in the order of the one-row
 * loop, ((x_k − l_ik x_i) − l_{i−1,k} x_{i−1}), with one load and store of x_k instead of two.
 * Bit for bit the one-row loop's result.
 */
export function solveLowerT(L: Mat, b: ArrayLike<number>): Vec {
  const n = L.rows;
  const x = Float64Array.from(b as ArrayLike<number>);
  const l = L.data;
  let i = n - 1;
  for (; i >= 1; i -= 2) {
    const ri = i * n, rj = ri - n;
    x[i] /= l[ri + i];
    const xi = x[i];
    x[i - 1] -= l[ri + i - 1] * xi;
    x[i - 1] /= l[rj + i - 1];
    const xj = x[i - 1];
    for (let k = 0; k < i - 1; k++) x[k] = x[k] - l[ri + k] * xi - l[rj + k] * xj;
  }
  if (i === 0) x[0] /= l[0];
  return x;
}

/** Solves (L Lᵀ) x = b. */
export function cholSolve(L: Mat, b: ArrayLike<number>): Vec {
  return solveLowerT(L, solveLower(L, b));
}

/** Solves L X = B (B is n×m, a right-hand side per column), through the row kernels of triangular.ts. */
export function solveLowerMat(L: Mat, B: Mat): Mat {
  const n = L.rows, m = B.cols;
  const t = new Float64Array(n * m);
  transposeInto(B.data, n, m, t);
  solveLowerRowsInto(L.data, n, t, m, t);
  const X = zeros(n, m);
  transposeInto(t, m, n, X.data);
  return X;
}

/** (L Lᵀ)⁻¹ B (B is n×m), through the row kernels of triangular.ts. */
export function cholSolveMat(L: Mat, B: Mat): Mat {
  const n = L.rows, m = B.cols;
  const t = new Float64Array(n * m);
  transposeInto(B.data, n, m, t);
  solveLowerRowsInto(L.data, n, t, m, t);
  solveLowerTRowsInto(L.data, n, t, m, t);
  const Y = zeros(n, m);
  transposeInto(t, m, n, Y.data);
  return Y;
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
