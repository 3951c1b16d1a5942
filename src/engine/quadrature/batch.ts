/**
 * Batch Bayesian-quadrature selection by integral-variance reduction (ALGORITHM.md §5; paper
 * Algorithm 1, line "batch BQ", and §3 "variance reduction acquisition").
 *
 * Glossary: n_A = |U_A| active inputs (the model's X plus pending points), q batch size, d dimension.
 * τ (n_A + q) kernel means t = θ·N(u; μ, Σ + Λ) (these include θ, so V(B) = R − a(B) directly),
 * K̄ = s·RBF(Ū, Ū) + σ²_n I over Ū = U_A ∪ B (noise on the candidate diagonal too).
 *   a(B) = τ̄ᵀ K̄⁻¹ τ̄ = τ_Aᵀ v + (τ_B − K_BA v)ᵀ S_B⁻¹ (τ_B − K_BA v)           (block inverse)
 *   v = K_AA⁻¹ τ_A,  S_B = K_BB + σ²_n I − K_BA K_AA⁻¹ K_AB = K_BB + σ²_n I − WᵀW,  W = L_A⁻¹ K_AB.
 * Per batch: O(q·n_A·d) kernel values, O(q·n_A²/2) triangular solves, an O(q³) Cholesky.
 * Pending points need no y: they only enter K_AA, so the factor of K_AA is the model's own factor
 * extended by one block-Cholesky step.
 * Candidate batches are scored from one stacked point matrix (`selectBestStacked`: M batches of q
 * rows each), with the q×q Schur complement, its factor and solve in buffers shared by all batches.
 */
import { InvalidInputError } from '../errors.js';
import { type Mat, cholesky, cholSolve, solveLowerMat, zeros } from '../linalg/index.js';
import { inverseSquaredLengthscales, kernelMatrix, rbfCross, scaledSqDistRow, toMat } from '../gp/kernel.js';
import { type CandidateTerms, candidateTerms, wDot } from './candidates.js';
import type { GpModel } from '../gp/types.js';
import { type CovInput, type KernelMeasure, type Points, integralPriorVariance, kernelMeansFor, prepareKernelMeasure } from './measure.js';

export interface BatchSelector {
  /** a(∅) = τ_Aᵀ K_AA⁻¹ τ_A. */
  readonly base: number;
  /** R, so that the integral variance after observing B is V(B) = R − score(B). */
  readonly priorVariance: number;
  /** a(B) for one batch (q×d). */
  score(batch: Points): number;
  /** The candidate batch with the largest a(B) (first one on ties). */
  selectBest(candidates: ArrayLike<Points>): { index: number; score: number };
  /** The same for M batches of q points stacked in P (Mq×d): batch i is rows iq … iq + q − 1. */
  selectBestStacked(P: Mat, q: number): { index: number; score: number };
  /**
   * q distinct rows of a pool P (m×d) chosen greedily: each maximises the gain of a(B) given the
   * rows chosen before it (see `selectGreedy`). Returns the row indices in the order chosen and a(B).
   */
  selectGreedy(P: Mat, q: number): { rows: number[]; score: number };
  /** The best of the batches of q rows of P listed in `batches` (M·q row indices, batch i first at iq). */
  selectBestOfPool(P: Mat, q: number, batches: Int32Array): { index: number; score: number };
}

/** Lower factor of [[K_XX, K_XP], [K_PX, K_PP]] from the factor L of K_XX (block Cholesky). */
function extendCholesky(L: Mat, Kxp: Mat, Kpp: Mat): Mat {
  const n = L.rows, p = Kpp.rows, N = n + p;
  const W = solveLowerMat(L, Kxp); // n×p
  const Schur = { rows: p, cols: p, data: Kpp.data.slice() };
  for (let i = 0; i < p; i++) {
    for (let j = 0; j < p; j++) {
      let s = 0;
      for (let k = 0; k < n; k++) s += W.data[k * p + i] * W.data[k * p + j];
      Schur.data[i * p + j] -= s;
    }
  }
  const { L: Lp } = cholesky(Schur);
  const out = zeros(N, N);
  for (let i = 0; i < n; i++) out.data.set(L.data.subarray(i * n, i * n + i + 1), i * N);
  for (let i = 0; i < p; i++) {
    for (let k = 0; k < n; k++) out.data[(n + i) * N + k] = W.data[k * p + i];
    for (let j = 0; j <= i; j++) out.data[(n + i) * N + n + j] = Lp.data[i * p + j];
  }
  return out;
}

function activeSet(model: GpModel, pending: Mat): { U: Mat; L: Mat } {
  if (pending.rows === 0) return { U: model.X, L: model.L };
  const d = model.X.cols, n = model.X.rows;
  const U = zeros(n + pending.rows, d);
  U.data.set(model.X.data, 0);
  U.data.set(pending.data, n * d);
  const Kpp = kernelMatrix(pending, model.hyper);
  for (let i = 0; i < pending.rows; i++) Kpp.data[i * pending.rows + i] += model.jitter;
  return { U, L: extendCholesky(model.L, rbfCross(model.X, pending, model.hyper), Kpp) };
}

interface Context {
  model: GpModel;
  /** 1/ℓ², for the within-batch kernel values. */
  invL2: Float64Array;
  measure: KernelMeasure;
  U: Mat;
  L: Mat;
  v: Float64Array;
  base: number;
}

/** Buffers for one q×q Schur complement, its factor and solve, shared by every batch of a call. */
interface Scratch {
  /** Distances of one batch point to the later ones. */
  dist: Float64Array;
  /** τ_b − k_bᵀ v of the batch's points. */
  resid: Float64Array;
  SB: Float64Array;
  LB: Float64Array;
  z: Float64Array;
}

function scratchFor(q: number): Scratch {
  return { dist: new Float64Array(q), resid: new Float64Array(q), SB: new Float64Array(q * q), LB: new Float64Array(q * q), z: new Float64Array(q) };
}

/**
 * a(B) for the q points P[offset … offset + q) whose terms are already computed, or, with `rows`,
 * for the points P[rows[offset + i]] (a batch formed from a pool). K_BB + σ²_n I, the q×q Cholesky
 * and the solve are written out here (the arithmetic of `kernelMatrix`, `tryCholesky` and
 * `solveLower`, in the same order) so that scoring 1000 batches allocates nothing.
 */
function scoreFromTerms(c: Context, P: Mat, q: number, terms: CandidateTerms, offset: number, w: Scratch, rows?: Int32Array): number {
  const d = P.cols, invL2 = c.invL2, s = c.model.hyper.outputscale;
  const SB = w.SB, LB = w.LB, z = w.z, dist = w.dist;
  const resid = terms.resid;
  for (let i = 0; i < q; i++) {
    const a = rows ? rows[offset + i] : offset + i;
    SB[i * q + i] = s + c.model.hyper.noise - wDot(terms, a, a);
    if (rows) for (let j = i + 1; j < q; j++) scaledSqDistRow(P.data, a * d, P, rows[offset + j], rows[offset + j] + 1, invL2, dist, j - i - 1, 1);
    else scaledSqDistRow(P.data, a * d, P, a + 1, offset + q, invL2, dist, 0, 1);
    for (let j = i + 1; j < q; j++) {
      const b = rows ? rows[offset + j] : offset + j;
      const v = s * Math.exp(-0.5 * dist[j - i - 1]) - wDot(terms, a, b);
      SB[i * q + j] = v;
      SB[j * q + i] = v;
    }
    w.resid[i] = resid[a];
  }
  // S_B ⪰ σ²_n I in exact arithmetic; the ladder only guards rounding.
  let L = LB;
  let ok = true;
  for (let j = 0; j < q && ok; j++) {
    let t = SB[j * q + j];
    for (let k = 0; k < j; k++) t -= LB[j * q + k] * LB[j * q + k];
    if (!(t > 0) || !Number.isFinite(t)) { ok = false; break; }
    const ljj = Math.sqrt(t);
    LB[j * q + j] = ljj;
    for (let i = j + 1; i < q; i++) {
      let u = SB[i * q + j];
      for (let k = 0; k < j; k++) u -= LB[i * q + k] * LB[j * q + k];
      LB[i * q + j] = u / ljj;
    }
  }
  if (!ok) L = cholesky({ rows: q, cols: q, data: SB.slice(0, q * q) }).L.data;
  // ‖L_B⁻¹ (τ_B − K_BA v)‖² by forward substitution.
  let gain = 0;
  for (let i = 0; i < q; i++) {
    let t = w.resid[i];
    for (let k = 0; k < i; k++) t -= L[i * q + k] * z[k];
    z[i] = t / L[i * q + i];
  }
  for (let i = 0; i < q; i++) gain += z[i] * z[i];
  return c.base + gain;
}

function termsFor(c: Context, P: Mat): CandidateTerms {
  return candidateTerms(c.U, c.L, c.v, c.model.hyper, c.measure, P);
}

/** All candidate batches stacked into one point matrix, with each batch's first row. */
function stack(batches: Mat[], d: number): { P: Mat; offsets: number[] } {
  const offsets: number[] = [];
  let m = 0;
  for (const B of batches) { offsets.push(m); m += B.rows; }
  const P = zeros(m, d);
  batches.forEach((B, i) => P.data.set(B.data, offsets[i] * d));
  return { P, offsets };
}

function selectBest(c: Context, candidates: ArrayLike<Points>, d: number): { index: number; score: number } {
  if (candidates.length === 0) throw new InvalidInputError('selectBest needs at least one candidate batch');
  const batches = Array.from(candidates as ArrayLike<Points>, (b) => toMat(b, d));
  const { P, offsets } = stack(batches, d);
  const terms = termsFor(c, P);
  const w = scratchFor(Math.max(...batches.map((b) => b.rows)));
  let index = -1, best = -Infinity;
  for (let i = 0; i < batches.length; i++) {
    const a = scoreFromTerms(c, P, batches[i].rows, terms, offsets[i], w);
    if (a > best) { best = a; index = i; }
  }
  return { index, score: best };
}

function selectBestStacked(c: Context, P: Mat, q: number): { index: number; score: number } {
  const d = c.U.cols;
  if (!(Number.isInteger(q) && q >= 1) || P.cols !== d || P.rows % q !== 0) {
    throw new InvalidInputError(`selectBestStacked: ${P.rows}×${P.cols} points are not batches of ${q} points of dimension ${d}`);
  }
  if (P.rows === 0) throw new InvalidInputError('selectBest needs at least one candidate batch');
  const terms = termsFor(c, P);
  const w = scratchFor(q);
  let index = -1, best = -Infinity;
  for (let i = 0, off = 0; off < P.rows; i++, off += q) {
    const a = scoreFromTerms(c, P, q, terms, off, w);
    if (a > best) { best = a; index = i; }
  }
  return { index, score: best };
}

/**
 * The best of M batches of q rows of a pool P (m×d): batch i is the rows batches[iq … iq + q − 1].
 * The pool's kernel rows and triangular solves are computed once per point; each batch then costs
 * O(q²·n_A) dot products and a q×q Cholesky.
 */
function selectBestOfPool(c: Context, P: Mat, q: number, batches: Int32Array): { index: number; score: number } {
  const m = P.rows;
  if (!(Number.isInteger(q) && q >= 1) || batches.length === 0 || batches.length % q !== 0 || P.cols !== c.U.cols) {
    throw new InvalidInputError(`selectBestOfPool: ${batches.length} row indices are not batches of ${q} rows of a pool of dimension ${c.U.cols}`);
  }
  for (const r of batches) if (!(r >= 0 && r < m)) throw new InvalidInputError(`selectBestOfPool: row ${r} is not in a pool of ${m} points`);
  const terms = termsFor(c, P);
  const w = scratchFor(q);
  let index = -1, best = -Infinity;
  for (let i = 0, off = 0; off < batches.length; i++, off += q) {
    const a = scoreFromTerms(c, P, q, terms, off, w, batches);
    if (a > best) { best = a; index = i; }
  }
  return { index, score: best };
}

/**
 * Greedy batch from a pool (ALGORITHM.md §20, measured and not the default): by the chain rule of the block
 * inverse, a(B ∪ {b}) = a(B) + ρ_b² / S_b with, over Ā = U_A ∪ B (factor L_Ā),
 *   w̄_b = L_Ā⁻¹ k(Ā, b) = [w_b; e_b],   S_b = s + σ²_n − ‖w̄_b‖²,   ρ_b = τ_b − w̄_bᵀ L_Ā⁻¹ τ_Ā.
 * Adding the chosen point c to B appends one entry to every pool point's w̄ and ζ = L_Ā⁻¹ τ_Ā:
 *   l_c = √S_c,  ζ_c = ρ_c / l_c,  e_bc = (k(c, b) − w̄_cᵀ w̄_b) / l_c,  ρ_b −= e_bc ζ_c,  S_b −= e_bc².
 * So the pool's kernel rows and triangular solves (`candidateTerms`, the O(m·n_A²) part) are paid
 * once per point, not once per batch, and each greedy step costs O(m·(n_A + q)).
 */
function selectGreedy(c: Context, P: Mat, q: number): { rows: number[]; score: number } {
  const m = P.rows, d = P.cols;
  if (!(Number.isInteger(q) && q >= 1) || q > m || d !== c.U.cols) {
    throw new InvalidInputError(`selectGreedy: cannot choose ${q} of ${m} points of dimension ${d}`);
  }
  const terms = termsFor(c, P);
  const s = c.model.hyper.outputscale;
  const rho = Float64Array.from(terms.resid);
  const S = new Float64Array(m);
  for (let b = 0; b < m; b++) S[b] = s + c.model.hyper.noise - wDot(terms, b, b);
  const E = new Float64Array(m * q); // e_b for the chosen points, row b
  const dist = new Float64Array(m);
  const taken = new Uint8Array(m);
  const rows: number[] = [];
  let score = c.base;
  for (let k = 0; k < q; k++) {
    let best = -1, gain = -Infinity;
    for (let b = 0; b < m; b++) {
      if (taken[b] || !(S[b] > 0)) continue;
      const g = (rho[b] * rho[b]) / S[b];
      if (g > gain) { gain = g; best = b; }
    }
    // Every remaining point has S_b ≤ 0 only through rounding (S_b ≥ σ²_n in exact arithmetic).
    if (best < 0) best = taken.indexOf(0);
    const cRow = best;
    taken[cRow] = 1;
    rows.push(cRow);
    if (gain > 0) score += gain;
    if (k === q - 1) break;
    const l = Math.sqrt(Math.max(S[cRow], Number.MIN_VALUE));
    const zeta = rho[cRow] / l;
    scaledSqDistRow(P.data, cRow * d, P, 0, m, c.invL2, dist, 0, 1);
    for (let b = 0; b < m; b++) {
      if (taken[b]) continue;
      let e = s * Math.exp(-0.5 * dist[b]) - wDot(terms, cRow, b);
      for (let j = 0; j < k; j++) e -= E[cRow * q + j] * E[b * q + j];
      e /= l;
      E[b * q + k] = e;
      rho[b] -= e * zeta;
      S[b] -= e * e;
    }
  }
  return { rows, score };
}

export function prepareBatchSelection(model: GpModel, mean: ArrayLike<number>, cov: CovInput, pendingPoints: Points = []): BatchSelector {
  const d = model.X.cols;
  const measure = prepareKernelMeasure(model.hyper, mean, cov);
  const pending = toMat(pendingPoints, d);
  const { U, L } = activeSet(model, pending.rows === 0 ? zeros(0, d) : pending);
  const tauA = kernelMeansFor(measure, U);
  const v = cholSolve(L, tauA);
  let base = 0;
  for (let j = 0; j < v.length; j++) base += tauA[j] * v[j];
  const ctx: Context = { model, invL2: inverseSquaredLengthscales(model.hyper.lengthscales), measure, U, L, v, base };
  const priorVariance = integralPriorVariance(model.hyper, measure.cov);
  return {
    base,
    priorVariance,
    score(batch) {
      const B = toMat(batch, d);
      return scoreFromTerms(ctx, B, B.rows, termsFor(ctx, B), 0, scratchFor(B.rows));
    },
    selectBest: (candidates) => selectBest(ctx, candidates, d),
    selectBestStacked: (P, q) => selectBestStacked(ctx, P, q),
    selectGreedy: (P, q) => selectGreedy(ctx, P, q),
    selectBestOfPool: (P, q, batches) => selectBestOfPool(ctx, P, q, batches),
  };
}
