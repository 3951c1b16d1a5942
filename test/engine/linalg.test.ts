import { describe, expect, it } from 'vitest';
import { CholeskyDecomposition, EigenvalueDecomposition, Matrix, determinant, inverse } from 'ml-matrix';
import { NonFiniteError, NotPositiveDefinite } from '../../src/engine/errors.js';
import {
  type Mat,
  addGramInto,
  cholesky,
  cholInverse,
  cholInverseSym,
  cholInverseSymInto,
  choleskyInto,
  cholSolve,
  cholSolveMat,
  floorEigenvalues,
  fromRows,
  identity,
  logDetFromChol,
  logMvnPdf,
  mahalanobisSq,
  matMul,
  matMulT,
  rowDotsSymInto,
  solveLower,
  solveLowerMat,
  solveLowerRowsInto,
  solveLowerT,
  solveLowerTRowsInto,
  symEig,
  symExpm,
  symSqrtm,
  toRows,
  transpose,
  transposeInto,
  tryCholesky,
  tryCholeskyInto,
} from '../../src/engine/linalg/index.js';
import { Rng } from '../../src/engine/random/index.js';

/** A Aᵀ + δI for a random n×n A: symmetric positive definite, condition number moderate. */
function randomSpd(rng: Rng, n: number, delta = 0.5): Mat {
  const A = fromRows(Array.from({ length: n }, () => Array.from(rng.normals(n))));
  const S = matMulT(A, A);
  for (let i = 0; i < n; i++) S.data[i * n + i] += delta;
  return S;
}

function randomSym(rng: Rng, n: number): Mat {
  const A = fromRows(Array.from({ length: n }, () => Array.from(rng.normals(n))));
  const S = fromRows(toRows(A).map((r, i) => r.map((v, j) => 0.5 * (v + A.data[j * n + i]))));
  return S;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const ml = (A: Mat) => new Matrix(toRows(A));
const flat = (M: Matrix) => Float64Array.from(M.to1DArray());

describe('Cholesky and solves against ml-matrix', () => {
  const rng = Rng.fromSeed(1);
  const A = randomSpd(rng, 30);
  const b = Array.from(rng.normals(30));

  it('the factor equals ml-matrix CholeskyDecomposition to 1e-12', () => {
    const { L, jitter } = cholesky(A);
    expect(jitter).toBe(0);
    expect(maxAbsDiff(L.data, flat(new CholeskyDecomposition(ml(A)).lowerTriangularMatrix))).toBeLessThan(1e-12);
  });

  it('cholSolve, cholSolveMat, cholInverse and cholInverseSym equal ml-matrix inverse to 1e-10', () => {
    const { L } = cholesky(A);
    const inv = inverse(ml(A));
    expect(maxAbsDiff(cholSolve(L, b), inv.mmul(Matrix.columnVector(b)).to1DArray())).toBeLessThan(1e-10);
    expect(maxAbsDiff(cholInverse(L).data, flat(inv))).toBeLessThan(1e-10);
    expect(maxAbsDiff(cholInverseSym(L).data, flat(inv))).toBeLessThan(1e-10);
    for (const n of [1, 2, 7]) {
      // Odd sizes exercise the unpaired last row/column of the two-at-a-time loops.
      const S = randomSpd(rng, n);
      expect(maxAbsDiff(cholInverseSym(cholesky(S).L).data, flat(inverse(ml(S))))).toBeLessThan(1e-10);
    }
    const B = fromRows(Array.from({ length: 30 }, () => Array.from(rng.normals(4))));
    expect(maxAbsDiff(cholSolveMat(L, B).data, flat(inv.mmul(ml(B))))).toBeLessThan(1e-10);
  });

  it('triangular solves invert L and Lᵀ; log det matches ml-matrix determinant', () => {
    const { L } = cholesky(A);
    const x = solveLower(L, b), y = solveLowerT(L, b);
    expect(maxAbsDiff(ml(L).mmul(Matrix.columnVector(x)).to1DArray(), b)).toBeLessThan(1e-10);
    expect(maxAbsDiff(ml(transpose(L)).mmul(Matrix.columnVector(y)).to1DArray(), b)).toBeLessThan(1e-10);
    const small = randomSpd(rng, 8);
    expect(logDetFromChol(cholesky(small).L)).toBeCloseTo(Math.log(determinant(ml(small))), 10);
  });

  it('mahalanobisSq and logMvnPdf equal the textbook formula with an explicit inverse', () => {
    const S = randomSpd(rng, 4), m = [0.1, -0.2, 0.3, 0], x = [1, 2, -1, 0.5];
    const r = Matrix.columnVector(x.map((v, i) => v - m[i]));
    const q = r.transpose().mmul(inverse(ml(S))).mmul(r).get(0, 0);
    const { L } = cholesky(S);
    expect(mahalanobisSq(L, x, m)).toBeCloseTo(q, 10);
    expect(logMvnPdf(x, m, L)).toBeCloseTo(-0.5 * (4 * Math.log(2 * Math.PI) + Math.log(determinant(ml(S))) + q), 10);
  });
});

describe('jitter ladder', () => {
  it('a rank-deficient PSD matrix (duplicated rows) is factorised with the smallest sufficient jitter', () => {
    const v = [[1, 2, 0.5], [1, 2, 0.5], [0.3, -1, 2]];
    const A = fromRows(v.map((a) => v.map((b) => a.reduce((s, x, k) => s + x * b[k], 0))));
    expect(tryCholesky(A)).toBeNull();
    const { L, jitter } = cholesky(A);
    expect(jitter).toBeGreaterThan(0);
    expect(jitter).toBeLessThanOrEqual(1e-2 * (A.data[0] + A.data[4] + A.data[8]) / 3);
    const LLt = matMulT(L, L);
    const expected = A.data.map((x, i) => x + (i % 4 === 0 ? jitter : 0));
    expect(maxAbsDiff(LLt.data, expected)).toBeLessThan(1e-12);
    // The jitter is a rung 10^k·mean(diag A) of the ladder, and the rung below it fails.
    const meanDiag = (A.data[0] + A.data[4] + A.data[8]) / 3;
    const rung = jitter / meanDiag;
    expect(Math.log10(rung)).toBeCloseTo(Math.round(Math.log10(rung)), 9);
    if (rung > 1.5e-10) {
      const below = fromRows(toRows(A).map((r, i) => r.map((x, j) => x + (i === j ? jitter / 10 : 0))));
      expect(tryCholesky(below)).toBeNull();
    }
  });

  it('an indefinite matrix is a NotPositiveDefinite error, never a NaN', () => {
    expect(() => cholesky(fromRows([[1, 2], [2, 1]]))).toThrow(NotPositiveDefinite);
    expect(() => cholesky(fromRows([[-1, 0], [0, -1]]))).toThrow(NotPositiveDefinite);
    expect(() => cholesky(fromRows([[NaN, 0], [0, 1]]))).toThrow(NotPositiveDefinite);
  });
});

describe('symmetric eigendecomposition and matrix functions', () => {
  const rng = Rng.fromSeed(2);
  const A = randomSym(rng, 6);

  it('eigenvalues equal ml-matrix EigenvalueDecomposition; A V = V diag(λ); V orthonormal', () => {
    const { values, vectors } = symEig(A);
    const ref = [...new EigenvalueDecomposition(ml(A), { assumeSymmetric: true }).realEigenvalues].sort((a, b) => a - b);
    expect(maxAbsDiff(values, ref)).toBeLessThan(1e-12);
    const AV = matMul(A, vectors);
    const VL = fromRows(toRows(vectors).map((r) => r.map((x, j) => x * values[j])));
    expect(maxAbsDiff(AV.data, VL.data)).toBeLessThan(1e-12);
    const VtV = matMul(transpose(vectors), vectors);
    expect(maxAbsDiff(VtV.data, identity(6).data)).toBeLessThan(1e-12);
  });

  it('expm(A)·expm(−A) = I and sqrtm(S)² = S (identities)', () => {
    const minusA = fromRows(toRows(A).map((r) => r.map((x) => -x)));
    expect(maxAbsDiff(matMul(symExpm(A), symExpm(minusA)).data, identity(6).data)).toBeLessThan(1e-10);
    const S = randomSpd(rng, 6);
    const R = symSqrtm(S);
    expect(maxAbsDiff(matMul(R, R).data, S.data)).toBeLessThan(1e-10);
  });

  it('expm of a diagonal matrix is the elementwise exp; overflow is a typed error', () => {
    const E = symExpm(fromRows([[1, 0], [0, -2]]));
    expect(E.data[0]).toBeCloseTo(Math.E, 14);
    expect(E.data[3]).toBeCloseTo(Math.exp(-2), 14);
    expect(() => symExpm(fromRows([[1000, 0], [0, 0]]))).toThrow(NonFiniteError);
  });

  it('floorEigenvalues lifts λ_min to 1e-12·λ_max and keeps the rest', () => {
    const F = floorEigenvalues(fromRows([[1, 0], [0, -1]]));
    const { values } = symEig(F);
    expect(values[0]).toBeCloseTo(1e-12, 20);
    expect(values[1]).toBeCloseTo(1, 14);
  });
});

/** The textbook one-row-at-a-time Cholesky (dot-product form), the reference for the unrolled one. */
function plainCholesky(A: Mat): Float64Array | null {
  const n = A.rows, a = A.data, l = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    let s = a[j * n + j];
    for (let k = 0; k < j; k++) s -= l[j * n + k] * l[j * n + k];
    if (!(s > 0)) return null;
    l[j * n + j] = Math.sqrt(s);
    for (let i = j + 1; i < n; i++) {
      let t = a[i * n + j];
      for (let k = 0; k < j; k++) t -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = t / l[j * n + j];
    }
  }
  return l;
}

/** (L Lᵀ)⁻¹ = L⁻ᵀ L⁻¹ with L⁻¹ by plain forward substitution, each entry summed in ascending k. */
function plainInverse(l: Float64Array, n: number): Float64Array {
  const inv = new Float64Array(n * n); // inv[j*n + i] = (L⁻¹)_ij
  for (let j = 0; j < n; j++) {
    inv[j * n + j] = 1 / l[j * n + j];
    for (let i = j + 1; i < n; i++) {
      let s = l[i * n + j] * inv[j * n + j];
      for (let k = j + 1; k < i; k++) s += l[i * n + k] * inv[j * n + k];
      inv[j * n + i] = -s * (1 / l[i * n + i]);
    }
  }
  const out = new Float64Array(n * n);
  for (let a = 0; a < n; a++) {
    for (let b = a; b < n; b++) {
      let s = inv[a * n + b] * inv[b * n + b];
      for (let k = b + 1; k < n; k++) s += inv[a * n + k] * inv[b * n + k];
      out[a * n + b] = s;
      out[b * n + a] = s;
    }
  }
  return out;
}

describe('unrolled factorisation and inverse (the GP fit\'s hot loops)', () => {
  const rng = Rng.fromSeed(11);
  // Sizes around the unrolling widths (4 rows, 4 columns) and one the size of a fit.
  const sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64, 151];

  it('tryCholeskyInto and cholInverseSymInto equal the plain loops bit for bit', () => {
    for (const n of sizes) {
      const A = randomSpd(rng, n, 0.1);
      const ref = plainCholesky(A)!;
      const l = new Float64Array(n * n).fill(7); // stale contents: the upper triangle must be cleared
      expect(tryCholeskyInto(A.data, n, l)).toBe(true);
      expect(Array.from(l)).toEqual(Array.from(ref));
      expect(Array.from(tryCholesky(A)!.data)).toEqual(Array.from(ref));
      const out = new Float64Array(n * n), u = new Float64Array(n * n).fill(3);
      cholInverseSymInto(l, n, out, u);
      expect(Array.from(out)).toEqual(Array.from(plainInverse(ref, n)));
      expect(Array.from(cholInverseSym({ rows: n, cols: n, data: l }).data)).toEqual(Array.from(out));
      // And it is the inverse: A (L Lᵀ)⁻¹ = I.
      const I = matMul(A, { rows: n, cols: n, data: out });
      expect(maxAbsDiff(I.data, identity(n).data)).toBeLessThan(1e-8);
    }
  });

  it('choleskyInto climbs the same jitter ladder as cholesky on a singular matrix', () => {
    // Rows 0 and 1 equal: the second pivot is exactly 1 − 1² = 0.
    const S = fromRows([[1, 1, 0.5], [1, 1, 0.5], [0.5, 0.5, 3]]);
    const { L, jitter } = cholesky(S);
    const l = new Float64Array(9);
    expect(choleskyInto(S.data, 3, l, new Float64Array(0))).toBe(jitter);
    expect(jitter).toBeGreaterThan(0);
    expect(Array.from(l)).toEqual(Array.from(L.data));
    expect(() => choleskyInto(fromRows([[-1, 0], [0, -1]]).data, 2, new Float64Array(4), new Float64Array(4))).toThrow(NotPositiveDefinite);
  });
});

/**
 * The column-layout forward and back substitutions as they were written before the row kernels of
 * triangular.ts (Golub & Van Loan, Matrix Computations, 4th ed., Alg. 3.1.1 and 3.1.2, column by
 * column, multiplying by 1/l_ii): the kernels must give the same numbers bit for bit.
 */
function plainSolveLowerMat(l: Float64Array, n: number, b: Float64Array, m: number): Float64Array {
  const x = b.slice();
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < i; k++) {
      const lik = l[i * n + k];
      if (lik === 0) continue;
      for (let j = 0; j < m; j++) x[i * m + j] -= lik * x[k * m + j];
    }
    const inv = 1 / l[i * n + i];
    for (let j = 0; j < m; j++) x[i * m + j] *= inv;
  }
  return x;
}

function plainSolveLowerTMat(l: Float64Array, n: number, b: Float64Array, m: number): Float64Array {
  const y = b.slice();
  for (let i = n - 1; i >= 0; i--) {
    const inv = 1 / l[i * n + i];
    for (let j = 0; j < m; j++) y[i * m + j] *= inv;
    for (let k = 0; k < i; k++) {
      const lik = l[i * n + k];
      if (lik === 0) continue;
      for (let j = 0; j < m; j++) y[k * m + j] -= lik * y[i * m + j];
    }
  }
  return y;
}

describe('triangular solves with the right-hand sides as rows (triangular.ts)', () => {
  const rng = Rng.fromSeed(12);

  it('solveLowerRowsInto / solveLowerTRowsInto equal the plain column loops bit for bit, in place or not', () => {
    // m around the four-at-a-time width, n odd and even.
    for (const [n, m] of [[1, 1], [5, 3], [8, 4], [13, 7], [30, 66]]) {
      const { L } = cholesky(randomSpd(rng, n, 0.1));
      const B = fromRows(Array.from({ length: n }, () => Array.from(rng.normals(m))));
      const Bt = new Float64Array(n * m);
      transposeInto(B.data, n, m, Bt);
      const fwd = new Float64Array(n * m), back = new Float64Array(n * m).fill(5);
      solveLowerRowsInto(L.data, n, Bt, m, fwd);
      solveLowerTRowsInto(L.data, n, Bt, m, back);
      const asColumns = (t: Float64Array) => {
        const out = new Float64Array(n * m);
        transposeInto(t, m, n, out);
        return Array.from(out);
      };
      expect(asColumns(fwd)).toEqual(Array.from(plainSolveLowerMat(L.data, n, B.data, m)));
      expect(asColumns(back)).toEqual(Array.from(plainSolveLowerTMat(L.data, n, B.data, m)));
      const inPlace = Bt.slice();
      solveLowerRowsInto(L.data, n, inPlace, m, inPlace);
      solveLowerTRowsInto(L.data, n, inPlace, m, inPlace);
      expect(asColumns(inPlace)).toEqual(Array.from(cholSolveMat(L, B).data));
      expect(asColumns(inPlace)).toEqual(Array.from(plainSolveLowerTMat(L.data, n, plainSolveLowerMat(L.data, n, B.data, m), m)));
      expect(Array.from(solveLowerMat(L, B).data)).toEqual(Array.from(plainSolveLowerMat(L.data, n, B.data, m)));
      // And they solve: L X = B and Lᵀ X = B (ml-matrix products).
      expect(maxAbsDiff(flat(ml(L).mmul(new Matrix(toRows({ rows: n, cols: m, data: Float64Array.from(asColumns(fwd)) })))), B.data)).toBeLessThan(1e-9);
      expect(maxAbsDiff(flat(ml(transpose(L)).mmul(new Matrix(toRows({ rows: n, cols: m, data: Float64Array.from(asColumns(back)) })))), B.data)).toBeLessThan(1e-9);
    }
  });
});

describe('Gram products of the REML fit (gram.ts)', () => {
  it('rowDotsSymInto and addGramInto equal plain dot-product loops bit for bit (sizes around the width of 4)', () => {
    const rng = Rng.fromSeed(13);
    for (const [rows, len] of [[1, 3], [2, 4], [4, 5], [7, 2], [10, 9], [11, 4], [14, 3]]) {
      const x = Float64Array.from(rng.normals(rows * len)), y = Float64Array.from(rng.normals(rows * len));
      const out = new Float64Array(rows * rows);
      rowDotsSymInto(x, y, rows, len, out);
      const P = Float64Array.from(rng.normals(rows * rows)), Q = P.slice();
      addGramInto(Q, rows, x, len, -1);
      for (let a = 0; a < rows; a++) {
        for (let b = 0; b < rows; b++) {
          const [i, j] = a <= b ? [a, b] : [b, a];
          let s = 0, g = 0;
          for (let k = 0; k < len; k++) {
            s += x[i * len + k] * y[j * len + k];
            g += x[i * len + k] * x[j * len + k];
          }
          expect(out[a * rows + b]).toBe(s);
          expect(Q[a * rows + b]).toBe(P[a * rows + b] - g);
        }
      }
    }
  });
});

/** The one-row loops that solveLower / solveLowerT (cholesky.ts) tile: the bit-for-bit reference. */
function plainSolveLower(l: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const x = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= l[i * n + k] * x[k];
    x[i] = s / l[i * n + i];
  }
  return x;
}

function plainSolveLowerT(l: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const x = Float64Array.from(b);
  for (let i = n - 1; i >= 0; i--) {
    x[i] /= l[i * n + i];
    for (let k = 0; k < i; k++) x[k] -= l[i * n + k] * x[i];
  }
  return x;
}

describe('single right-hand-side triangular solves (cholesky.ts)', () => {
  it('solveLower (four rows at a time) and solveLowerT (two at a time) equal the one-row loops bit for bit', () => {
    const rng = Rng.fromSeed(21);
    // Every remainder of the tiles (n mod 4, n mod 2), and sizes a BO fit reaches.
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 64, 101, 250]) {
      const { L } = cholesky(randomSpd(rng, n, 0.05));
      const b = Array.from(rng.normals(n));
      const x = solveLower(L, b), y = solveLowerT(L, b);
      const xs = plainSolveLower(L.data, n, b), ys = plainSolveLowerT(L.data, n, b);
      expect(Array.from(x)).toEqual(Array.from(xs));
      expect(Array.from(y)).toEqual(Array.from(ys));
      // Object.is per entry: toEqual treats 0 and −0 alike, bit identity does not.
      expect(Array.from(x).every((v, i) => Object.is(v, xs[i]))).toBe(true);
      expect(Array.from(y).every((v, i) => Object.is(v, ys[i]))).toBe(true);
      // And they solve (independent check through ml-matrix's product).
      expect(maxAbsDiff(ml(L).mmul(Matrix.columnVector(Array.from(x))).to1DArray(), b)).toBeLessThan(1e-8);
    }
  });
});
