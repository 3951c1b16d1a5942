/**
 * The GP with explicit basis functions (Rasmussen & Williams 2006, §2.7, the vague-prior limit of eq. 2.45)
 * and its restricted (REML) likelihood (Harville 1974; Patterson & Thompson 1971). docs/ALGORITHM.md §14.
 *
 * Glossary: n points, d dimension, p basis functions. X: n×d, y: n (standardised targets), H: n×p
 * the basis at the data (basis.ts). K = s·E + (σ²_n + jitter) I as in mll.ts, K = L Lᵀ.
 *   β̂  = (Hᵀ K⁻¹ H)⁻¹ Hᵀ K⁻¹ y                                    (generalised least squares)
 *   r   = y − H β̂,  α = K⁻¹ r
 *   ℓ_R = −½ rᵀ K⁻¹ r − ½ log det K − ½ log det(Hᵀ K⁻¹ H) − ((n − p)/2) log 2π
 *   ∂ℓ_R/∂φ_k = ½ tr((ααᵀ − P) ∂K/∂φ_k),  P = K⁻¹ − K⁻¹H (HᵀK⁻¹H)⁻¹ HᵀK⁻¹
 * (the same trace form as the plain likelihood with K⁻¹ replaced by P; β̂ is optimal at every φ,
 * so it contributes no term). The MAP objective is (ℓ_R + Σ log priors)/n with the priors of mll.ts.
 * φ keeps the layout of mll.ts, [log ℓ, log s, ρ, c]; c is not a parameter here (the constant is a
 * basis function), so its gradient is 0 and the model is built with c = 0.
 *
 * With H = 1 (the constant basis) this is the REML of the constant-mean GP, not its ML: the two
 * differ by −½ log(1ᵀK⁻¹1) − ½ log 2π, and c = β̂ is the GLS mean instead of an L-BFGS coordinate.
 * Why REML: with a quadratic basis p grows to (d+1)(d+2)/2; ML then underestimates the residual
 * variance (it does not count the p degrees of freedom spent on β) and drives σ²_n and s down.
 */
import {
  type Mat,
  type Vec,
  cholesky,
  choleskyInto,
  cholInverseSymInto,
  cholSolve,
  addGramInto,
  logDetFromChol,
  rowDotsSymInto,
  solveLower,
  solveLowerRowsInto,
  solveLowerTRowsInto,
  transposeInto,
} from '../linalg/index.js';
import { kernelMatrixInto, type KnownNoise } from './kernel.js';
import { contrastBasis, contrastIsCheaper, contrastObjectiveEvaluator } from './reml-contrast.js';
import { type MapObjectiveEvaluator, logPrior, mllGradientFrom, unpackHyper } from './mll.js';
import type { GpHyper, GpModel, GpPriors } from './types.js';

/** Largest jitter (× mean diagonal) for HᵀK⁻¹H: a rank-deficient basis gets a ridge, not a failure. */
const GLS_MAX_JITTER = 1e-2;

interface Gls {
  /** Lower Cholesky factor of M = Hᵀ K⁻¹ H (p×p). */
  LM: Mat;
  beta: Vec;
  /** r = y − H β̂. */
  r: Vec;
}

/**
 * GLS for β given the factor L of K: V = L⁻¹H, M = VᵀV, β̂ = M⁻¹ Vᵀ L⁻¹ y. `Ht` is Hᵀ (p×n) and
 * `Vt` (p×n) receives Vᵀ: with the basis functions as rows, the p solves and the p(p+1)/2 entries of
 * M are contiguous dot products (linalg/triangular.ts, linalg/gram.ts), four at a time.
 */
function gls(L: Mat, H: Mat, Ht: Float64Array, y: ArrayLike<number>, Vt: Float64Array): Gls {
  const n = H.rows, p = H.cols;
  solveLowerRowsInto(L.data, n, Ht, p, Vt);
  const w = solveLower(L, y);
  const M: Mat = { rows: p, cols: p, data: new Float64Array(p * p) };
  const rhs = new Float64Array(p);
  for (let a = 0; a < p; a++) {
    let t = 0;
    for (let k = 0; k < n; k++) t += Vt[a * n + k] * w[k];
    rhs[a] = t;
  }
  rowDotsSymInto(Vt, Vt, p, n, M.data);
  const { L: LM } = cholesky(M, { maxJitterRatio: GLS_MAX_JITTER });
  const beta = cholSolve(LM, rhs);
  const r = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = y[i];
    for (let a = 0; a < p; a++) s -= H.data[i * p + a] * beta[a];
    r[i] = s;
  }
  return { LM, beta, r };
}

/** Hᵀ (p×n) of H (n×p). */
function transposed(H: Mat): Float64Array {
  const Ht = new Float64Array(H.rows * H.cols);
  transposeInto(H.data, H.rows, H.cols, Ht);
  return Ht;
}

/**
 * C = B L_M⁻ᵀ (n×p) from Bᵀ = (K⁻¹H)ᵀ (p×n): row i of C solves L_M c = (row i of B) by forward
 * substitution (as `solveLower`: dividing by the pivot), four rows at a time sharing L_M's loads.
 */
function glsProjector(Bt: Float64Array, n: number, LM: Mat, C: Float64Array): void {
  const p = LM.rows, lm = LM.data;
  let i = 0;
  for (; i + 3 < n; i += 4) {
    const c0 = i * p, c1 = c0 + p, c2 = c1 + p, c3 = c2 + p;
    for (let a = 0; a < p; a++) {
      const la = a * p;
      let s0 = Bt[a * n + i], s1 = Bt[a * n + i + 1], s2 = Bt[a * n + i + 2], s3 = Bt[a * n + i + 3];
      for (let b = 0; b < a; b++) {
        const lab = lm[la + b];
        s0 -= lab * C[c0 + b];
        s1 -= lab * C[c1 + b];
        s2 -= lab * C[c2 + b];
        s3 -= lab * C[c3 + b];
      }
      const piv = lm[la + a];
      C[c0 + a] = s0 / piv;
      C[c1 + a] = s1 / piv;
      C[c2 + a] = s2 / piv;
      C[c3 + a] = s3 / piv;
    }
  }
  for (; i < n; i++) {
    const ci = i * p;
    for (let a = 0; a < p; a++) {
      let s = Bt[a * n + i];
      for (let b = 0; b < a; b++) s -= lm[a * p + b] * C[ci + b];
      C[ci + a] = s / lm[a * p + a];
    }
  }
}

/** How the restricted objective is computed: GLS through K's factor (below), error contrasts (reml-contrast.ts), or the cheaper. */
export type RemlRoute = 'auto' | 'gls' | 'contrast';

/**
 * The restricted MAP objective of one data set, evaluated many times with shared buffers (cf. mll.ts).
 * 'auto' takes the contrast route when it is cheaper for this n and p and H has full column rank.
 * The GLS route's gradient reuses the value's V = L⁻¹H: K⁻¹H = L⁻ᵀV is one more triangular solve.
 */
export function remlObjectiveEvaluator(X: Mat, y: ArrayLike<number>, H: Mat, priors: GpPriors, route: RemlRoute = 'auto', known: KnownNoise = null): MapObjectiveEvaluator {
  const n = X.rows, nn = n * n, p = H.cols;
  if (route === 'contrast' || (route === 'auto' && contrastIsCheaper(n, p))) {
    const cb = contrastBasis(H);
    if (cb) return contrastObjectiveEvaluator(X, y, cb, priors, known);
  }
  const K = { rows: n, cols: n, data: new Float64Array(nn) };
  const L = { rows: n, cols: n, data: new Float64Array(nn) };
  const P = new Float64Array(nn);
  const scratch = new Float64Array(nn);
  const Ht = transposed(H);
  const Vt = new Float64Array(n * p);
  const Bt = new Float64Array(n * p);
  const C = new Float64Array(n * p);
  const scale = Math.max(n, 1);
  let hyper: GpHyper | null = null;
  let fit: Gls | null = null;
  let alpha: Vec = new Float64Array(n);
  let priorGrad: Float64Array = new Float64Array(0);
  return {
    value(phi) {
      hyper = null;
      const h = { ...unpackHyper(phi, X.cols), constant: 0 };
      kernelMatrixInto(X, h, K.data, known);
      choleskyInto(K.data, n, L.data, scratch);
      fit = gls(L, H, Ht, y, Vt);
      alpha = cholSolve(L, fit.r);
      let quad = 0;
      for (let i = 0; i < n; i++) quad += fit.r[i] * alpha[i];
      const ll = -0.5 * quad - 0.5 * logDetFromChol(L) - 0.5 * logDetFromChol(fit.LM) - 0.5 * (n - p) * Math.log(2 * Math.PI);
      const pr = logPrior(h, priors);
      priorGrad = pr.grad;
      hyper = h;
      return (ll + pr.value) / scale;
    },
    gradient() {
      if (!hyper || !fit) throw new Error('remlObjectiveEvaluator: gradient() needs a successful value() first');
      cholInverseSymInto(L.data, n, P, scratch);
      // P = K⁻¹ − C Cᵀ with C = K⁻¹H L_M⁻ᵀ; (K⁻¹H)ᵀ = rows of L⁻ᵀ V.
      solveLowerTRowsInto(L.data, n, Vt, p, Bt);
      glsProjector(Bt, n, fit.LM, C);
      addGramInto(P, n, C, p, -1);
      const g = mllGradientFrom(X, hyper, K.data, P, alpha);
      g[X.cols + 2] = 0; // c is not a parameter (the constant is a basis function)
      for (let i = 0; i < g.length; i++) g[i] = (g[i] + priorGrad[i]) / scale;
      return g;
    },
  };
}

/** ℓ_R at fixed hyperparameters (tests; the fit uses the evaluator). */
export function restrictedLogLikelihood(X: Mat, y: ArrayLike<number>, H: Mat, hyper: GpHyper, known: KnownNoise = null): number {
  const n = X.rows, p = H.cols;
  const K = { rows: n, cols: n, data: new Float64Array(n * n) };
  kernelMatrixInto(X, { ...hyper, constant: 0 }, K.data, known);
  const { L } = cholesky(K);
  const f = gls(L, H, transposed(H), y, new Float64Array(n * p));
  const alpha = cholSolve(L, f.r);
  let quad = 0;
  for (let i = 0; i < n; i++) quad += f.r[i] * alpha[i];
  return -0.5 * quad - 0.5 * logDetFromChol(L) - 0.5 * logDetFromChol(f.LM) - 0.5 * (n - p) * Math.log(2 * Math.PI);
}

export interface BasisModel {
  /** The residual GP: a zero-mean GP on r = y − Hβ̂ (so α = K⁻¹(y − Hβ̂) and every formula of bq.ts applies). */
  model: GpModel;
  beta: Vec;
}

/** The model at fixed hyperparameters: GLS β̂ and the residual GP. Throws NotPositiveDefinite. */
export function buildBasisModel(X: Mat, y: ArrayLike<number>, H: Mat, hyper: GpHyper, known: KnownNoise = null): BasisModel {
  const n = X.rows;
  const h = { ...hyper, constant: 0 };
  const K = { rows: n, cols: n, data: new Float64Array(n * n) };
  kernelMatrixInto(X, h, K.data, known);
  const { L, jitter } = cholesky(K);
  const f = gls(L, H, transposed(H), y, new Float64Array(n * H.cols));
  return { model: { hyper: h, X, y: f.r, L, alpha: cholSolve(L, f.r), jitter, ...knownField(known) }, beta: f.beta };
}

/** The model's record of the known noise (absent when there is none, so models without it are unchanged). */
export function knownField(known: KnownNoise): { knownNoise?: number[] } {
  return known ? { knownNoise: Array.from(known) } : {};
}
