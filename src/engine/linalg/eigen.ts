/**
 * Symmetric eigendecomposition and the functions of symmetric matrices built on it (expm, sqrtm,
 * eigenvalue floor). The decomposition itself is ml-matrix's (Householder tridiagonalisation + QL,
 * the classic tred2/tql2): d ≤ 30 here, so a hand-written version would buy nothing.
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { NonFiniteError } from '../errors.js';
import { type Mat, type Vec, isFiniteMat, symmetrize, zeros } from './matrix.js';

export interface SymEig {
  /** Eigenvalues in ascending order. */
  values: Vec;
  /** Column j is the unit eigenvector of values[j]. */
  vectors: Mat;
}

export function symEig(A: Mat): SymEig {
  if (!isFiniteMat(A)) throw new NonFiniteError('symEig: matrix has non-finite entries');
  const S = symmetrize(A);
  const n = S.rows;
  const rows: number[][] = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(S.data.subarray(i * n, (i + 1) * n)));
  const evd = new EigenvalueDecomposition(new Matrix(rows), { assumeSymmetric: true });
  const vals = evd.realEigenvalues;
  const V = evd.eigenvectorMatrix;
  const order = vals.map((_, i) => i).sort((a, b) => vals[a] - vals[b]);
  const values = new Float64Array(n);
  const vectors = zeros(n, n);
  order.forEach((src, j) => {
    values[j] = vals[src];
    for (let i = 0; i < n; i++) vectors.data[i * n + j] = V.get(i, src);
  });
  return { values, vectors };
}

/** V f(Λ) Vᵀ for a symmetric A = V Λ Vᵀ. */
export function symFunction(A: Mat, f: (lambda: number) => number): Mat {
  const { values, vectors } = symEig(A);
  const n = values.length;
  const fv = values.map(f);
  const out = zeros(n, n);
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += vectors.data[i * n + k] * fv[k] * vectors.data[j * n + k];
      out.data[i * n + j] = s;
      out.data[j * n + i] = s;
    }
  }
  if (!isFiniteMat(out)) throw new NonFiniteError('matrix function overflowed');
  return out;
}

/** Matrix exponential of a symmetric matrix. Overflow is a typed error, never an Infinity. */
export function symExpm(A: Mat): Mat {
  return symFunction(A, Math.exp);
}

/** Principal square root of a symmetric positive semi-definite matrix (negative eigenvalues → 0). */
export function symSqrtm(A: Mat): Mat {
  return symFunction(A, (l) => Math.sqrt(Math.max(l, 0)));
}

/** Floors the eigenvalues at ratio·λ_max (ALGORITHM.md §4: λ_min ≥ 1e-12 λ_max). */
export function floorEigenvalues(A: Mat, ratio = 1e-12): Mat {
  const { values } = symEig(A);
  const lmax = Math.max(values[values.length - 1], 0);
  const floor = lmax > 0 ? ratio * lmax : ratio;
  return symFunction(A, (l) => Math.max(l, floor));
}
