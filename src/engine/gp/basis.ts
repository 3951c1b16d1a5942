/**
 * Explicit basis functions for the GP mean (Rasmussen & Williams 2006, §2.7; docs/ALGORITHM.md §14):
 * m(u) = h(u)ᵀβ with h a constant, linear, diagonal-quadratic or full-quadratic basis in whitened
 * coordinates z = W(u − c), W = L_c⁻¹ where L_c is the lower Cholesky factor of a reference covariance
 * Σ_c (the search distribution's) and c its centre. Whitening makes the features O(1) however far
 * Σ has shrunk, so the generalised least squares for β stays well conditioned.
 *
 * Glossary: n points, d dimension, p = number of basis functions. X: n×d, H: n×p.
 * Feature order: [1 | z_1 … z_d | z_1² … z_d² | z_i z_j (i < j, row by row)].
 *   constant  p = 1, linear p = 1 + d, diagonal p = 1 + 2d, full p = 1 + d + d(d+1)/2.
 * In the original coordinates the fitted mean is the quadratic
 *   m(u) = a0 + bᵀ(u − c) + (u − c)ᵀ A (u − c),  b = Wᵀ β_lin,  A = Wᵀ Q W,
 * with Q_ii = β_ii and Q_ij = Q_ji = β_ij / 2 (i < j).
 */
import { InvalidInputError } from '../errors.js';
import { type Mat, zeros } from '../linalg/index.js';

export type BasisKind = 'constant' | 'linear' | 'diagonal' | 'full';

/** Richest first: the order in which `chooseBasis` tries them. */
const KINDS_RICHEST_FIRST: readonly BasisKind[] = ['full', 'diagonal', 'linear', 'constant'];

/** p, the number of basis functions of a kind at dimension d. */
export function basisSize(kind: BasisKind, d: number): number {
  switch (kind) {
    case 'constant':
      return 1;
    case 'linear':
      return 1 + d;
    case 'diagonal':
      return 1 + 2 * d;
    case 'full':
      return 1 + d + (d * (d + 1)) / 2;
  }
}

/**
 * The richest basis with n ≥ ratio·p (lq-CMA-ES's rule, Hansen 2019, uses ratio = 1.5): with fewer
 * points per coefficient the GLS fit interpolates noise and the GP residual has nothing left to learn.
 */
export function chooseBasis(n: number, d: number, ratio = 1.5): BasisKind {
  for (const k of KINDS_RICHEST_FIRST) if (n >= ratio * basisSize(k, d)) return k;
  return 'constant';
}

/** The lower-triangular inverse W = L⁻¹ (d×d) by forward substitution on the identity. */
export function lowerInverse(L: Mat): Mat {
  const d = L.rows, l = L.data;
  const W = zeros(d, d), w = W.data;
  for (let j = 0; j < d; j++) {
    for (let i = j; i < d; i++) {
      let s = i === j ? 1 : 0;
      for (let k = j; k < i; k++) s -= l[i * d + k] * w[k * d + j];
      w[i * d + j] = s / l[i * d + i];
    }
  }
  return W;
}

/** The features h(u) of one point into `out` (length p), given z = W(u − c) already formed. */
function featuresOf(kind: BasisKind, z: Float64Array, out: Float64Array, o: number): void {
  const d = z.length;
  out[o] = 1;
  if (kind === 'constant') return;
  for (let i = 0; i < d; i++) out[o + 1 + i] = z[i];
  if (kind === 'linear') return;
  for (let i = 0; i < d; i++) out[o + 1 + d + i] = z[i] * z[i];
  if (kind === 'diagonal') return;
  let k = o + 1 + 2 * d;
  for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) out[k++] = z[i] * z[j];
}

/** H (n×p): the basis at every row of X, whitened by W = L_c⁻¹ around the centre c. */
export function basisMatrix(kind: BasisKind, X: Mat, centre: ArrayLike<number>, W: Mat): Mat {
  const n = X.rows, d = X.cols;
  if (centre.length !== d || W.rows !== d || W.cols !== d) throw new InvalidInputError('basisMatrix: dimensions differ');
  const p = basisSize(kind, d);
  const H = zeros(n, p);
  const z = new Float64Array(d), r = new Float64Array(d);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < d; i++) r[i] = X.data[j * d + i] - centre[i];
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let k = 0; k <= i; k++) s += W.data[i * d + k] * r[k];
      z[i] = s;
    }
    featuresOf(kind, z, H.data, j * p);
  }
  return H;
}

/** m(u) = a0 + bᵀ(u − c) + (u − c)ᵀ A (u − c): the basis mean in the original coordinates. */
export interface QuadraticMean {
  centre: number[];
  a0: number;
  b: number[];
  /** Symmetric d×d. */
  A: number[][];
}

/** β (p) of a basis fitted with whitening W around `centre`, as a quadratic in the original coordinates. */
export function quadraticFromBasis(kind: BasisKind, beta: ArrayLike<number>, centre: ArrayLike<number>, W: Mat): QuadraticMean {
  const d = W.rows, w = W.data;
  if (beta.length !== basisSize(kind, d)) throw new InvalidInputError(`quadraticFromBasis: ${beta.length} coefficients for a ${kind} basis at d = ${d}`);
  const lin = new Float64Array(d);
  if (kind !== 'constant') for (let i = 0; i < d; i++) lin[i] = beta[1 + i];
  const Q = new Float64Array(d * d);
  if (kind === 'diagonal' || kind === 'full') for (let i = 0; i < d; i++) Q[i * d + i] = beta[1 + d + i];
  if (kind === 'full') {
    let k = 1 + 2 * d;
    for (let i = 0; i < d; i++) {
      for (let j = i + 1; j < d; j++) {
        Q[i * d + j] = beta[k] / 2;
        Q[j * d + i] = beta[k] / 2;
        k++;
      }
    }
  }
  // b = Wᵀ lin; A = Wᵀ Q W, then symmetrised exactly.
  const b = new Array<number>(d).fill(0);
  for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) b[i] += w[k * d + i] * lin[k];
  const QW = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) {
    let s = 0;
    for (let k = 0; k < d; k++) s += Q[i * d + k] * w[k * d + j];
    QW[i * d + j] = s;
  }
  const A = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) {
    let s = 0;
    for (let k = 0; k < d; k++) s += w[k * d + i] * QW[k * d + j];
    A[i][j] = s;
  }
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) {
    const v = 0.5 * (A[i][j] + A[j][i]);
    A[i][j] = v;
    A[j][i] = v;
  }
  return { centre: Array.from(centre), a0: beta[0], b, A };
}

/** m(u) of a quadratic mean at one point. */
export function evalQuadratic(q: QuadraticMean, u: ArrayLike<number>): number {
  const d = q.b.length;
  let v = q.a0;
  for (let i = 0; i < d; i++) {
    const ri = u[i] - q.centre[i];
    v += q.b[i] * ri;
    let s = 0;
    for (let j = 0; j < d; j++) s += q.A[i][j] * (u[j] - q.centre[j]);
    v += ri * s;
  }
  return v;
}
