/**
 * The ProbNES strategies' single door to the GP and quadrature modules (ALGORITHM.md §2, §3, §5):
 * everything the loop in probnes-core.ts needs, with JSON-friendly inputs (number[][]).
 *
 * Glossary (shapes): d = dimension, n = active points, q' = points selected by BQ, M = candidate
 * batches; mean μ (d), cov Σ (d×d); X = U_A (n×d); negYTilde (n) the GP targets −ỹ (maximised);
 * gMean g_μ (d), gCov G (d×d) = ∂E_ν[−ỹ]/∂(μ, Σ) in standardised units. The gradients come back
 * as plain rows (`…Rows`) where the quadrature module returns typed arrays.
 *
 * The surrogate of one generation is the GP `model` (the whole model with a constant mean, or the
 * residual GP of a model with explicit basis functions, docs/ALGORITHM.md §14) plus `quad`,
 * the basis mean as a quadratic in u (null when the mean is the GP's constant). Posterior mean =
 * quad(u) + the GP's mean(u); every integral and gradient below is the sum of the two parts (§15).
 */
import {
  type BasisKind,
  type GpHyper,
  type GpModel,
  type QuadraticMean,
  basisMatrix,
  basisSize,
  buildModel,
  chooseBasis,
  evalQuadratic,
  fitGp,
  lowerInverse,
  predict,
  probnesPriors,
  quadraticFromBasis,
  toMat,
} from '../gp/index.js';
import { type Mat, cholesky, fromRows, toRows, zeros } from '../linalg/index.js';
import { type Rng, sampleMvn } from '../random/index.js';
import { bqIntegral, expectedGradient, prepareBatchSelection, quadraticMoments, sampledGradient } from '../quadrature/index.js';
import { basisVariance } from '../gp/calibration.js';

export type { GpModel, QuadraticMean, BasisKind };

export interface Gradient {
  gMean: number[];
  gCov: number[][];
}

/**
 * The GP at fixed hyperparameters (ask and estimate rebuild it from the stored MAP); with a basis
 * mean `quad`, the residual GP fitted to −ỹ − quad(X) with a zero constant.
 */
export function rebuildModel(hyper: GpHyper, X: number[][], negYTilde: number[], quad: QuadraticMean | null = null, knownNoise: number[] | null = null): GpModel {
  if (!quad) return buildModel(toMat(X), negYTilde, hyper, knownNoise);
  return buildModel(toMat(X), negYTilde.map((v, j) => v - evalQuadratic(quad, X[j])), { ...hyper, constant: 0 }, knownNoise);
}

export interface FitOutcome {
  model: GpModel;
  quad: QuadraticMean | null;
  /** The basis of the mean: 'constant' is the plain GP of ALGORITHM.md §2. */
  basis: BasisKind;
  objective: number;
  fallbackReason: string | null;
}

/**
 * The variance the basis coefficients' uncertainty adds to the residual GP's prediction at u (R&W eq.
 * 2.42, docs/ALGORITHM.md §28), for a GP whose mean has basis `kind` around `centre`, fitted on X. The
 * basis is rebuilt whitened by `cov`: the spans of the constant, linear and full quadratic bases do not
 * depend on the whitening, so for them this is the fit's own term exactly; a diagonal basis was fitted
 * whitened by the ν of its tell, and `cov` (the ν after it) makes the term an approximation.
 */
export function basisVarianceAt(model: GpModel, kind: BasisKind, centre: number[], X: number[][], cov: number[][], u: number[]): number {
  const W = lowerInverse(cholesky(fromRows(cov)).L);
  const H = basisMatrix(kind, toMat(X), centre, W);
  const at = toMat([u]);
  return basisVariance(model, H, at, basisMatrix(kind, at, centre, W))[0];
}

/**
 * The whitening of the quadratic GP mean (params.meanFunction quadratic; docs/ALGORITHM.md §14):
 * centre c and covariance of the current ν.
 */
export interface QuadraticSpec {
  centre: number[];
  cov: number[][];
}

/** Points needed for the full quadratic basis under the n ≥ 1.5·p rule (the active-set floor). */
export function quadraticFloor(d: number): number {
  return Math.ceil(1.5 * basisSize('full', d));
}

/**
 * The generation's GP: MAP fit with the ProbNES priors (§2); the warm start, when given, is one more
 * start. With a quadratic mean the basis is the richest of constant, linear, diagonal and full
 * quadratic with n ≥ 1.5·p (the count rule, §14), fitted under the restricted likelihood (GLS β); with
 * the constant basis it is the constant-mean GP of §2, bit for bit.
 */
export function fitProbnesGp(
  X: number[][],
  negYTilde: number[],
  opts: { warmStart: GpHyper | null; coldStart?: boolean; restarts: number; rng: Rng; quadratic?: QuadraticSpec | null; knownNoise?: number[] | null },
): FitOutcome {
  const basis: BasisKind = opts.quadratic ? chooseBasis(X.length, X[0].length) : 'constant';
  const d = X[0].length;
  const priors = probnesPriors(d);
  // Reported noise (docs/ALGORITHM.md §28): known per-point variances on top of the learned σ²_n.
  const knownNoise = opts.knownNoise ?? null;
  if (basis === 'constant' || !opts.quadratic) {
    const fit = fitGp(X, negYTilde, { priors, warmStart: opts.warmStart, coldStart: opts.coldStart, restarts: opts.restarts, rng: opts.rng, knownNoise });
    return { model: fit.model, quad: null, basis: 'constant', objective: fit.objective, fallbackReason: fit.fallbackReason };
  }
  const W = lowerInverse(cholesky(fromRows(opts.quadratic.cov)).L);
  const Xm = toMat(X);
  const H = basisMatrix(basis, Xm, opts.quadratic.centre, W);
  const fit = fitGp(Xm, negYTilde, { priors, warmStart: opts.warmStart, coldStart: opts.coldStart, restarts: opts.restarts, rng: opts.rng, basis: H, knownNoise });
  const quad = quadraticFromBasis(basis, fit.beta!, opts.quadratic.centre, W);
  return { model: fit.model, quad, basis, objective: fit.objective, fallbackReason: fit.fallbackReason };
}

function withQuadratic(g: { gradMean: Float64Array; gradCov: Mat }, quad: QuadraticMean | null, mean: number[], cov: number[][]): Gradient {
  if (quad) {
    const q = quadraticMoments(quad, mean, cov);
    for (let i = 0; i < g.gradMean.length; i++) g.gradMean[i] += q.gradMean[i];
    for (let i = 0; i < g.gradCov.data.length; i++) g.gradCov.data[i] += q.gradCov.data[i];
  }
  return { gMean: Array.from(g.gradMean), gCov: toRows(g.gradCov) };
}

/** §3 closed form: the expected gradient (g_μ, G) of E_ν[−ỹ] (basis part: quadrature/quadratic.ts). */
export function expectedGradientRows(model: GpModel, mean: number[], cov: number[][], quad: QuadraticMean | null = null): Gradient {
  return withQuadratic(expectedGradient(model, mean, cov), quad, mean, cov);
}

/**
 * §3 ablation: score-function estimate on one joint GP posterior sample at N draws from ν. The basis
 * mean is deterministic given the data (β̂), so its part is the exact gradient.
 */
export function sampledGradientRows(model: GpModel, mean: number[], cov: number[][], rng: Rng, n: number, quad: QuadraticMean | null = null): Gradient {
  return withQuadratic(sampledGradient(model, mean, cov, rng, n), quad, mean, cov);
}

/**
 * E_ν[−ỹ] and its posterior variance V = R − tᵀK⁻¹t (standardised units). With a basis mean, V is
 * the residual GP's (β̂ taken as known, as the batch selection does).
 */
export function integralMoments(model: GpModel, mean: number[], cov: number[][], quad: QuadraticMean | null = null): { mean: number; variance: number } {
  const b = bqIntegral(model, mean, cov);
  return { mean: b.mean + (quad ? quadraticMoments(quad, mean, cov).integral : 0), variance: b.variance };
}

/** Latent posterior mean and variance of −ỹ at one point. */
export function predictAt(model: GpModel, x: number[], quad: QuadraticMean | null = null): { mean: number; variance: number } {
  const p = predict(model, [x]);
  return { mean: p.mean[0] + (quad ? evalQuadratic(quad, x) : 0), variance: p.variance[0] };
}

/** `count` i.i.d. draws from N(mean, cov). */
export function sampleFrom(mean: number[], cov: number[][], count: number, rng: Rng): number[][] {
  const L = toRows(cholesky(fromRows(cov)).L);
  return Array.from({ length: count }, () => Array.from(sampleMvn(rng, mean, L)));
}

/** M candidate batches of `size` i.i.d. points from ν, drawn batch by batch (§5). */
export function drawCandidateBatches(mean: number[], cov: number[][], size: number, m: number, rng: Rng): number[][][] {
  const P = drawCandidateBatchesStacked(mean, cov, size, m, rng);
  const d = mean.length;
  return Array.from({ length: m }, (_, b) => Array.from({ length: size }, (_, i) => Array.from(P.data.subarray((b * size + i) * d, (b * size + i + 1) * d))));
}

/**
 * The same draws stacked in one (M·size)×d matrix: x = μ + L z with z from `rng.fillNormal`, the
 * random numbers and arithmetic of `sampleMvn` (one d-vector of normals per point), without the
 * per-point allocations.
 */
export function drawCandidateBatchesStacked(mean: number[], cov: number[][], size: number, m: number, rng: Rng): Mat {
  const d = mean.length;
  const l = cholesky(fromRows(cov)).L.data;
  const P = zeros(m * size, d);
  const x = P.data, z = new Float64Array(d);
  for (let r = 0; r < m * size; r++) {
    rng.fillNormal(z);
    const o = r * d;
    for (let i = 0; i < d; i++) {
      let s = mean[i];
      for (let k = 0; k <= i; k++) s += l[i * d + k] * z[k];
      x[o + i] = s;
    }
  }
  return P;
}

/** How a batch is formed from the candidate pool (default profile). */
export type PoolSelection = 'greedy' | 'random-batches';

/** Row i of a stacked pool of points (one point per row), as a point. */
function poolRow(P: Mat, i: number): number[] {
  return Array.from(P.data.subarray(i * P.cols, (i + 1) * P.cols));
}

/**
 * §5 batch BQ: among M candidate batches from ν, the one maximising a(B) = τᵀ K̄⁻¹ τ over
 * U_A ∪ pending ∪ B, i.e. minimising the posterior variance of the integral under ν. Pending
 * points need no y, so they simply join U_A. With `pool.size` > 0 (default profile) the candidates
 * are `pool.size` points drawn from ν, whose kernel rows and solves are paid once per point instead
 * of once per point of every batch; the batch is then either built greedily (batch.ts
 * `selectGreedy`) or the best of M random batches of distinct pool points (`random-batches`).
 * `admissible` (AskContext, §32.3) thins the pool before either: only the admissible points are
 * candidates, unless fewer than `size` of them are, when all are (the draws are the same either way).
 */
export function selectBatch(
  model: GpModel,
  mean: number[],
  cov: number[][],
  pending: number[][],
  size: number,
  m: number,
  rng: Rng,
  pool: { size: number; selection: PoolSelection } = { size: 0, selection: 'greedy' },
  admissible?: (u: number[]) => boolean,
): number[][] {
  if (pool.size > 0) {
    const drawn = drawCandidateBatchesStacked(mean, cov, 1, Math.max(pool.size, size), rng);
    const P = admissible ? admissiblePool(drawn, size, admissible) : drawn;
    const selector = prepareBatchSelection(model, mean, cov, pending);
    if (pool.selection === 'greedy') return selector.selectGreedy(P, size).rows.map((i) => poolRow(P, i));
    const batches = poolBatches(P.rows, size, m, rng);
    const best = selector.selectBestOfPool(P, size, batches).index;
    return Array.from(batches.subarray(best * size, (best + 1) * size), (i) => poolRow(P, i));
  }
  const P = drawCandidateBatchesStacked(mean, cov, size, m, rng);
  const sel = prepareBatchSelection(model, mean, cov, pending);
  const best = sel.selectBestStacked(P, size).index;
  return Array.from({ length: size }, (_, i) => poolRow(P, best * size + i));
}

/** The rows of the pool P that are admissible, in order; P itself when fewer than `size` are. */
function admissiblePool(P: Mat, size: number, admissible: (u: number[]) => boolean): Mat {
  const d = P.cols;
  const kept: number[] = [];
  for (let i = 0; i < P.rows; i++) if (admissible(poolRow(P, i))) kept.push(i);
  if (kept.length === P.rows || kept.length < size) return P;
  const out = zeros(kept.length, d);
  kept.forEach((i, r) => out.data.set(P.data.subarray(i * d, (i + 1) * d), r * d));
  return out;
}

/** M batches of `size` distinct indices into a pool of `poolSize` points, uniformly at random. */
function poolBatches(poolSize: number, size: number, m: number, rng: Rng): Int32Array {
  const out = new Int32Array(m * size);
  for (let b = 0; b < m; b++) {
    for (let i = 0; i < size; i++) {
      let r: number;
      do r = Math.floor(rng.uniform() * poolSize);
      while (out.subarray(b * size, b * size + i).includes(r));
      out[b * size + i] = r;
    }
  }
  return out;
}
