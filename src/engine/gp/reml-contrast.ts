/**
 * The restricted MAP objective of reml.ts through error contrasts (Harville 1974, "Bayesian inference
 * for variance components using only error contrasts", Biometrika 61; Rasmussen & Williams 2006 §2.7).
 *
 * Glossary: n points, p basis functions, m = n − p contrasts. F (n×m) an orthonormal basis of the
 * complement of span(H): FᵀH = 0, FᵀF = I (stored as Fᵀ, m×n, and F). A = FᵀKF (m×m) = L_A L_Aᵀ,
 * z = Fᵀy. Then, for H of full column rank,
 *   rᵀK⁻¹r = zᵀA⁻¹z,   log det K + log det(HᵀK⁻¹H) = log det A + log det(HᵀH),   P = F A⁻¹ Fᵀ,
 * so ℓ_R = −½ zᵀA⁻¹z − ½ log det A − ½ log det(HᵀH) − (m/2) log 2π, α = K⁻¹r = F A⁻¹ z, and the
 * gradient is the trace form of reml.ts with this P. F depends on H only, so it is built once per fit.
 *
 * Why: per evaluation this route costs K Fᵀ (n²m), A (nm²/2), the m×m Cholesky, and for the gradient
 * L_A⁻¹Fᵀ (nm²/2) and P (n²m/2) multiply–adds, with no n×n Cholesky or inverse; the GLS route of
 * reml.ts costs about n³/2 + 3n²p/2 + np². With a full quadratic basis near the active-set floor
 * (n ≈ 1.5p, e.g. d = 10: n = 100, p = 66, m = 34) this is a third of the work; with few basis
 * functions (d = 2: p = 6) it is more, and the GLS route is used (`contrastIsCheaper`). The two routes
 * give the same objective and gradient up to rounding (test/engine/gp-basis.test.ts), not bit for bit.
 */
import { type Mat, choleskyInto, logDetFromChol, rowDotsSymInto, solveLower, solveLowerRowsInto, solveLowerT, addGramInto, reflectFour, reflectOne } from '../linalg/index.js';
import { kernelMatrixInto, type KnownNoise } from './kernel.js';
import { type MapObjectiveEvaluator, logPrior, mllGradientFrom, unpackHyper } from './mll.js';
import type { GpHyper, GpPriors } from './types.js';

/** |r_kk| ≤ this × max |r_jj| counts as rank-deficient: the GLS route (with its ridge on HᵀK⁻¹H) is used. */
const RANK_TOL = 1e-10;

/** Multiply–adds per evaluation (value + gradient) of the two routes, leading terms (see the header). */
export function contrastIsCheaper(n: number, p: number): boolean {
  const m = n - p;
  if (m <= 0) return false;
  return 1.5 * n * n * m + n * m * m < 0.5 * n * n * n + 1.5 * n * n * p + n * p * p;
}

export interface ContrastBasis {
  /** Fᵀ (m×n): row a is the a-th contrast. */
  Ft: Float64Array;
  /** F (n×m). */
  F: Float64Array;
  m: number;
  /** log det(HᵀH) = 2 Σ log |r_kk|. */
  logDetHtH: number;
}

/**
 * F from the Householder QR of H (Golub & Van Loan, Matrix Computations, 4th ed., Alg. 5.2.1):
 * H = Q R with Q = Q_0 Q_1 … Q_{p−1}, Q_k = I − β_k v_k v_kᵀ; F = Q's last m columns, i.e.
 * Q applied to e_{p}, …, e_{n−1}. Null when H is numerically rank-deficient or p ≥ n.
 */
export function contrastBasis(H: Mat): ContrastBasis | null {
  const n = H.rows, p = H.cols, m = n - p;
  if (m <= 0) return null;
  // Columns of H, contiguous (column k at k·n), reduced in place to R.
  const a = new Float64Array(n * p);
  for (let i = 0; i < n; i++) for (let k = 0; k < p; k++) a[k * n + i] = H.data[i * p + k];
  const V = new Float64Array(n * p), beta = new Float64Array(p), rdiag = new Float64Array(p);
  for (let k = 0; k < p; k++) {
    const ck = k * n;
    let norm = 0;
    for (let i = k; i < n; i++) norm += a[ck + i] * a[ck + i];
    norm = Math.sqrt(norm);
    const r = a[ck + k] > 0 ? -norm : norm;
    rdiag[k] = r;
    let vtv = 0;
    for (let i = k; i < n; i++) {
      const v = i === k ? a[ck + k] - r : a[ck + i];
      V[ck + i] = v;
      vtv += v * v;
    }
    beta[k] = vtv > 0 ? 2 / vtv : 0;
    // Q_k applied to columns k + 1 … p − 1, four at a time sharing the loads of v_k.
    let j = k + 1;
    for (; j + 3 < p; j += 4) reflectFour(V, ck, beta[k], k, n, a, j * n, (j + 1) * n, (j + 2) * n, (j + 3) * n);
    for (; j < p; j++) reflectOne(V, ck, beta[k], k, n, a, j * n);
  }
  let rmax = 0;
  for (let k = 0; k < p; k++) rmax = Math.max(rmax, Math.abs(rdiag[k]));
  let logDetHtH = 0;
  for (let k = 0; k < p; k++) {
    if (!(Math.abs(rdiag[k]) > RANK_TOL * rmax)) return null;
    logDetHtH += 2 * Math.log(Math.abs(rdiag[k]));
  }
  // Row c of Fᵀ = Q_0 … Q_{p−1} e_{p+c}; four rows at a time share the loads of each v_k (every
  // row's sums and updates are the same operations in the same order as one row alone).
  const Ft = new Float64Array(m * n);
  for (let c = 0; c < m; c++) Ft[c * n + p + c] = 1;
  let c = 0;
  for (; c + 3 < m; c += 4) {
    for (let k = p - 1; k >= 0; k--) reflectFour(V, k * n, beta[k], k, n, Ft, c * n, (c + 1) * n, (c + 2) * n, (c + 3) * n);
  }
  for (; c < m; c++) {
    for (let k = p - 1; k >= 0; k--) reflectOne(V, k * n, beta[k], k, n, Ft, c * n);
  }
  const F = new Float64Array(n * m);
  for (let c = 0; c < m; c++) for (let i = 0; i < n; i++) F[i * m + c] = Ft[c * n + i];
  return { Ft, F, m, logDetHtH };
}

/**
 * T = Fᵀ K (m×n) for symmetric K: t_aj = Σ_i f_ai k_ji (i ascending), contiguous rows, four contrasts
 * times two rows of K at a time (eight sums sharing each load); the tiling changes no sum.
 */
function contrastTimesKernel(Ft: Float64Array, m: number, K: Float64Array, n: number, T: Float64Array): void {
  let a = 0;
  for (; a + 3 < m; a += 4) {
    const f0 = a * n, f1 = f0 + n, f2 = f1 + n, f3 = f2 + n;
    let j = 0;
    for (; j + 1 < n; j += 2) {
      const kj = j * n, kl = kj + n;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      for (let i = 0; i < n; i++) {
        const k = K[kj + i], l = K[kl + i];
        const a0 = Ft[f0 + i], a1 = Ft[f1 + i], a2 = Ft[f2 + i], a3 = Ft[f3 + i];
        s0 += a0 * k;
        s1 += a1 * k;
        s2 += a2 * k;
        s3 += a3 * k;
        t0 += a0 * l;
        t1 += a1 * l;
        t2 += a2 * l;
        t3 += a3 * l;
      }
      T[f0 + j] = s0;
      T[f1 + j] = s1;
      T[f2 + j] = s2;
      T[f3 + j] = s3;
      T[f0 + j + 1] = t0;
      T[f1 + j + 1] = t1;
      T[f2 + j + 1] = t2;
      T[f3 + j + 1] = t3;
    }
    for (; j < n; j++) {
      const kj = j * n;
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let i = 0; i < n; i++) {
        const k = K[kj + i];
        s0 += Ft[f0 + i] * k;
        s1 += Ft[f1 + i] * k;
        s2 += Ft[f2 + i] * k;
        s3 += Ft[f3 + i] * k;
      }
      T[f0 + j] = s0;
      T[f1 + j] = s1;
      T[f2 + j] = s2;
      T[f3 + j] = s3;
    }
  }
  for (; a < m; a++) {
    const fa = a * n;
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += Ft[fa + i] * K[j * n + i];
      T[fa + j] = s;
    }
  }
}

/** The evaluator of reml.ts's objective by the contrast route, for a basis with `contrastBasis(H)` = cb. */
export function contrastObjectiveEvaluator(X: Mat, y: ArrayLike<number>, cb: ContrastBasis, priors: GpPriors, known: KnownNoise = null): MapObjectiveEvaluator {
  const n = X.rows, m = cb.m, { Ft, F } = cb;
  const K = new Float64Array(n * n);
  const T = new Float64Array(m * n);
  const A = new Float64Array(m * m);
  const LA: Mat = { rows: m, cols: m, data: new Float64Array(m * m) };
  const scratch = new Float64Array(m * m);
  const G = new Float64Array(n * m);
  const P = new Float64Array(n * n);
  const z = new Float64Array(m);
  for (let c = 0; c < m; c++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += Ft[c * n + i] * y[i];
    z[c] = s;
  }
  const constant = -0.5 * cb.logDetHtH - 0.5 * m * Math.log(2 * Math.PI);
  const scale = Math.max(n, 1);
  const alpha = new Float64Array(n);
  let hyper: GpHyper | null = null;
  let priorGrad: Float64Array = new Float64Array(0);
  return {
    value(phi) {
      hyper = null;
      const h = { ...unpackHyper(phi, X.cols), constant: 0 };
      kernelMatrixInto(X, h, K, known);
      contrastTimesKernel(Ft, m, K, n, T);
      rowDotsSymInto(T, Ft, m, n, A);
      choleskyInto(A, m, LA.data, scratch);
      const w = solveLower(LA, z);
      let quad = 0;
      for (let c = 0; c < m; c++) quad += w[c] * w[c];
      // α = F A⁻¹ z.
      const u = solveLowerT(LA, w);
      for (let i = 0; i < n; i++) {
        let s = 0;
        for (let c = 0; c < m; c++) s += F[i * m + c] * u[c];
        alpha[i] = s;
      }
      const ll = -0.5 * quad - 0.5 * logDetFromChol(LA) + constant;
      const pr = logPrior(h, priors);
      priorGrad = pr.grad;
      hyper = h;
      return (ll + pr.value) / scale;
    },
    gradient() {
      if (!hyper) throw new Error('contrastObjectiveEvaluator: gradient() needs a successful value() first');
      // P = F A⁻¹ Fᵀ = G Gᵀ with row i of G = L_A⁻¹ (row i of F).
      solveLowerRowsInto(LA.data, m, F, n, G);
      P.fill(0);
      addGramInto(P, n, G, m, 1);
      const g = mllGradientFrom(X, hyper, K, P, alpha);
      g[X.cols + 2] = 0; // c is not a parameter (the constant is a basis function)
      for (let i = 0; i < g.length; i++) g[i] = (g[i] + priorGrad[i]) / scale;
      return g;
    },
  };
}
