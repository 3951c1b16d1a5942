/**
 * Dense row-major float64 matrices and the basic products.
 *
 * Engine matrices are `Mat` = {rows, cols, data: Float64Array} (row-major). Small matrices that live
 * in JSON state (covariances, d×d) are stored as number[][] and converted with `fromRows`/`toRows`.
 * Hand-written loops over Float64Array are used instead of ml-matrix for the hot paths (products,
 * Cholesky, triangular solves): ml-matrix stores rows as separate arrays and goes through
 * get/set calls, which bench/engine.ts measures as several times slower at n = 150–500.
 */
export interface Mat {
  rows: number;
  cols: number;
  data: Float64Array;
}

export type Vec = Float64Array;

export function zeros(rows: number, cols: number): Mat {
  return { rows, cols, data: new Float64Array(rows * cols) };
}

export function identity(n: number, scale = 1): Mat {
  const M = zeros(n, n);
  for (let i = 0; i < n; i++) M.data[i * n + i] = scale;
  return M;
}

export function diag(values: ArrayLike<number>): Mat {
  const n = values.length;
  const M = zeros(n, n);
  for (let i = 0; i < n; i++) M.data[i * n + i] = values[i];
  return M;
}

export function diagOf(A: Mat): Vec {
  const n = Math.min(A.rows, A.cols);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = A.data[i * A.cols + i];
  return out;
}

export function fromRows(rows: ArrayLike<ArrayLike<number>>): Mat {
  const r = rows.length;
  const c = r === 0 ? 0 : rows[0].length;
  const M = zeros(r, c);
  for (let i = 0; i < r; i++) {
    if (rows[i].length !== c) throw new RangeError('ragged matrix');
    for (let j = 0; j < c; j++) M.data[i * c + j] = rows[i][j];
  }
  return M;
}

export function toRows(A: Mat): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < A.rows; i++) out.push(Array.from(A.data.subarray(i * A.cols, (i + 1) * A.cols)));
  return out;
}

export function clone(A: Mat): Mat {
  return { rows: A.rows, cols: A.cols, data: A.data.slice() };
}

export function get(A: Mat, i: number, j: number): number {
  return A.data[i * A.cols + j];
}

export function transpose(A: Mat): Mat {
  const T = zeros(A.cols, A.rows);
  for (let i = 0; i < A.rows; i++) for (let j = 0; j < A.cols; j++) T.data[j * A.rows + i] = A.data[i * A.cols + j];
  return T;
}

/** C = A B (i-k-j loop order: contiguous inner access for row-major data). */
export function matMul(A: Mat, B: Mat): Mat {
  if (A.cols !== B.rows) throw new RangeError(`matMul: ${A.rows}×${A.cols} by ${B.rows}×${B.cols}`);
  const n = A.rows, m = B.cols, p = A.cols;
  const C = zeros(n, m);
  const a = A.data, b = B.data, c = C.data;
  for (let i = 0; i < n; i++) {
    const ci = i * m;
    for (let k = 0; k < p; k++) {
      const aik = a[i * p + k];
      if (aik === 0) continue;
      const bk = k * m;
      for (let j = 0; j < m; j++) c[ci + j] += aik * b[bk + j];
    }
  }
  return C;
}

/** A Bᵀ without forming the transpose. */
export function matMulT(A: Mat, B: Mat): Mat {
  if (A.cols !== B.cols) throw new RangeError('matMulT: inner dimensions differ');
  const n = A.rows, m = B.rows, p = A.cols;
  const C = zeros(n, m);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < m; j++) {
      let s = 0;
      for (let k = 0; k < p; k++) s += A.data[i * p + k] * B.data[j * p + k];
      C.data[i * m + j] = s;
    }
  }
  return C;
}

export function matVec(A: Mat, x: ArrayLike<number>): Vec {
  if (A.cols !== x.length) throw new RangeError('matVec: dimension mismatch');
  const out = new Float64Array(A.rows);
  for (let i = 0; i < A.rows; i++) {
    let s = 0;
    const o = i * A.cols;
    for (let j = 0; j < A.cols; j++) s += A.data[o + j] * x[j];
    out[i] = s;
  }
  return out;
}

export function add(A: Mat, B: Mat, beta = 1): Mat {
  if (A.rows !== B.rows || A.cols !== B.cols) throw new RangeError('add: shapes differ');
  const C = clone(A);
  for (let i = 0; i < C.data.length; i++) C.data[i] += beta * B.data[i];
  return C;
}

export function scale(A: Mat, s: number): Mat {
  const C = clone(A);
  for (let i = 0; i < C.data.length; i++) C.data[i] *= s;
  return C;
}

export function dot(x: ArrayLike<number>, y: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i] * y[i];
  return s;
}

export function outer(x: ArrayLike<number>, y: ArrayLike<number>): Mat {
  const M = zeros(x.length, y.length);
  for (let i = 0; i < x.length; i++) for (let j = 0; j < y.length; j++) M.data[i * y.length + j] = x[i] * y[j];
  return M;
}

/** (A + Aᵀ)/2: every matrix that must be symmetric passes through here before a factorisation. */
export function symmetrize(A: Mat): Mat {
  if (A.rows !== A.cols) throw new RangeError('symmetrize: matrix is not square');
  const n = A.rows;
  const S = zeros(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      const v = 0.5 * (A.data[i * n + j] + A.data[j * n + i]);
      S.data[i * n + j] = v;
      S.data[j * n + i] = v;
    }
  }
  return S;
}

export function isFiniteMat(A: Mat): boolean {
  for (let i = 0; i < A.data.length; i++) if (!Number.isFinite(A.data[i])) return false;
  return true;
}

export function isFiniteVec(x: ArrayLike<number>): boolean {
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) return false;
  return true;
}
