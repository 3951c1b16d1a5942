/**
 * Leave-one-out predictive log likelihood of a GP with explicit basis functions (Rasmussen & Williams
 * 2006, §5.4.2 for the zero-mean GP; docs/ALGORITHM-default.md §L for the basis).
 *
 * Glossary: n points, p basis functions; y (n) the targets, H (n×p) the basis at the data, K = L Lᵀ
 * the kernel matrix with noise (the fitted model's factor). With a vague (flat) prior on β the
 * targets have the improper density ∝ exp(−½ yᵀPy), P = K⁻¹ − K⁻¹H (HᵀK⁻¹H)⁻¹ HᵀK⁻¹ (the
 * restricted precision of reml.ts). Conditioning a Gaussian with precision P on all but y_i gives
 *   y_i | y_−i ~ N(μ_i, σ_i²),  μ_i = y_i − (Py)_i / P_ii,  σ_i² = 1 / P_ii,
 * which is R&W eq. 5.12 with K⁻¹ replaced by P: the prediction of y_i from the other n − 1 points with
 * β re-estimated by GLS on them and its uncertainty included (R&W eq. 2.42), without refitting.
 * It is proper when H without row i still has full column rank (P_ii > 0); otherwise null.
 *   LOO = Σ_i log N(y_i; μ_i, σ_i²) = Σ_i [½ log P_ii − (Py)_i² / (2 P_ii)] − (n/2) log 2π.
 * The kernel hyperparameters are those of the fit on all n points (R&W §5.4.2 does the same).
 *
 * Why: unlike the restricted likelihood, whose value belongs to the n − p contrasts of one basis, the
 * LOO score predicts the same n observations whatever the basis, so it compares bases on one scale.
 */
import { EngineError } from '../errors.js';
import { type Mat, cholesky, cholInverseSym } from '../linalg/index.js';

/** P_ii ≤ this × max_j P_jj counts as 0: point i is needed to determine β. */
const LEVERAGE_TOL = 1e-10;

export interface LooResult {
  /** Σ_i log p(y_i | y_−i). */
  total: number;
  /** log p(y_i | y_−i) of each point (they sum to `total`). */
  terms: Float64Array;
  /** μ_i and σ_i² of each left-out prediction. */
  mean: Float64Array;
  variance: Float64Array;
}

/** The LOO predictive of every point, given the factor L of K, the basis H (n×p) and the targets. Null when improper. */
export function looPredictive(L: Mat, H: Mat, y: ArrayLike<number>): LooResult | null {
  const n = L.rows, p = H.cols;
  if (H.rows !== n || y.length !== n) throw new RangeError('looPredictive: dimensions differ');
  if (n <= p) return null;
  const Ki = cholInverseSym(L).data;
  // V = K⁻¹H (n×p), M = HᵀK⁻¹H (p×p).
  const V = new Float64Array(n * p);
  for (let i = 0; i < n; i++) for (let a = 0; a < p; a++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += Ki[i * n + k] * H.data[k * p + a];
    V[i * p + a] = s;
  }
  const M: Mat = { rows: p, cols: p, data: new Float64Array(p * p) };
  for (let a = 0; a < p; a++) for (let b = 0; b <= a; b++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += H.data[k * p + a] * V[k * p + b];
    M.data[a * p + b] = s;
    M.data[b * p + a] = s;
  }
  let Mi: Float64Array;
  try {
    Mi = cholInverseSym(cholesky(M, { maxJitterRatio: 0 }).L).data;
  } catch (e) {
    if (e instanceof EngineError) return null; // H is rank-deficient at these points
    throw e;
  }
  // P = K⁻¹ − V M⁻¹ Vᵀ; only Py and diag(P) are needed.
  const VMi = new Float64Array(n * p);
  for (let i = 0; i < n; i++) for (let a = 0; a < p; a++) {
    let s = 0;
    for (let b = 0; b < p; b++) s += V[i * p + b] * Mi[b * p + a];
    VMi[i * p + a] = s;
  }
  const Vty = new Float64Array(p);
  for (let a = 0; a < p; a++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += V[k * p + a] * y[k];
    Vty[a] = s;
  }
  const Py = new Float64Array(n), Pd = new Float64Array(n);
  let pmax = 0;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += Ki[i * n + k] * y[k];
    let t = 0, dd = 0;
    for (let a = 0; a < p; a++) {
      t += VMi[i * p + a] * Vty[a];
      dd += VMi[i * p + a] * V[i * p + a];
    }
    Py[i] = s - t;
    Pd[i] = Ki[i * n + i] - dd;
    pmax = Math.max(pmax, Pd[i]);
  }
  const mean = new Float64Array(n), variance = new Float64Array(n), terms = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (!(Pd[i] > LEVERAGE_TOL * pmax)) return null;
    mean[i] = y[i] - Py[i] / Pd[i];
    variance[i] = 1 / Pd[i];
    terms[i] = 0.5 * Math.log(Pd[i]) - (Py[i] * Py[i]) / (2 * Pd[i]) - 0.5 * Math.log(2 * Math.PI);
    total += terms[i];
  }
  return Number.isFinite(total) ? { total, terms, mean, variance } : null;
}

