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
 * residual GP of a model with explicit basis functions, docs/ALGORITHM-default.md §A) plus `quad`,
 * the basis mean as a quadratic in u (null when the mean is the GP's constant). Posterior mean =
 * quad(u) + the GP's mean(u); every integral and gradient below is the sum of the two parts (§B).
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
  looPredictive,
  predict,
  probnesPriors,
  quadraticFromBasis,
  toMat,
} from '../gp/index.js';
import { type Mat, cholesky, fromRows, toRows, zeros } from '../linalg/index.js';
import { type Rng, sampleMvn } from '../random/index.js';
import { bqIntegral, expectedGradient, prepareBatchSelection, quadraticMoments, sampledGradient } from '../quadrature/index.js';

export type { GpModel, QuadraticMean, BasisKind };

export interface Gradient {
  gMean: number[];
  gCov: number[][];
}

/**
 * The GP at fixed hyperparameters (ask and estimate rebuild it from the stored MAP); with a basis
 * mean `quad`, the residual GP fitted to −ỹ − quad(X) with a zero constant.
 */
export function rebuildModel(hyper: GpHyper, X: number[][], negYTilde: number[], quad: QuadraticMean | null = null): GpModel {
  if (!quad) return buildModel(toMat(X), negYTilde, hyper);
  return buildModel(toMat(X), negYTilde.map((v, j) => v - evalQuadratic(quad, X[j])), { ...hyper, constant: 0 });
}

export interface FitOutcome {
  model: GpModel;
  quad: QuadraticMean | null;
  /** The basis of the mean: 'constant' is the plain GP of ALGORITHM.md §2. */
  basis: BasisKind;
  objective: number;
  fallbackReason: string | null;
}

/** How the GP mean is modelled (option `mean_function`; docs/ALGORITHM-default.md §A). */
export interface MeanSpec {
  /** 'constant' (§2) or 'quadratic': the richest basis up to the full quadratic that n ≥ 1.5·p allows. */
  kind: 'constant' | 'quadratic';
  /** Centre c and covariance of the whitening (the current ν). */
  centre: number[];
  cov: number[][];
  /**
   * How the basis is chosen (option `mean_basis`): 'count' the richest with n ≥ 1.5·p; 'loo' among
   * those, the poorest whose leave-one-out predictive log likelihood is within `looSe` standard errors
   * of the best one's (docs/ALGORITHM-default.md §L).
   */
  selection?: 'count' | 'loo' | 'loo-constant' | 'loo-gated';
  /** k of the k-SE rule (option `mean_basis_se`); 0: the best LOO score. */
  looSe?: number;
  /**
   * With selection 'loo-gated' (docs/ALGORITHM-default.md §M): τ (`mean_basis_wide`), κ
   * (`mean_basis_scale`) and ρ (`mean_basis_r2`) of the gate that lets the constant mean compete.
   */
  gate?: { wide: number; scale: number; r2: number };
}

/** Points needed for the full quadratic basis under the n ≥ 1.5·p rule (the active-set floor). */
export function quadraticFloor(d: number): number {
  return Math.ceil(1.5 * basisSize('full', d));
}

/**
 * MAP fit with the ProbNES priors (§2); the warm start, when given, is one more start. With a
 * quadratic mean and enough points for more than the constant basis, the GP has explicit basis
 * functions (restricted likelihood, GLS β); otherwise it is the constant-mean GP, bit for bit.
 */
export function fitModel(
  X: number[][],
  negYTilde: number[],
  opts: { warmStart: GpHyper | null; coldStart?: boolean; restarts: number; rng: Rng; mean?: MeanSpec },
): FitOutcome {
  const d = X[0].length;
  const richest: BasisKind = opts.mean?.kind === 'quadratic' ? chooseBasis(X.length, d) : 'constant';
  const sel = opts.mean?.selection ?? 'count';
  if (!opts.mean || richest === 'constant' || sel === 'count') return fitBasis(X, negYTilde, opts, richest);
  // 'loo-gated' (docs/ALGORITHM-default.md §M): the count rule's basis unless ν is wide, the residual
  // GP varies within ν and the basis explains little of the targets; only then the LOO comparison.
  let richFit: FitOutcome | null = null;
  if (sel === 'loo-gated') {
    richFit = fitBasis(X, negYTilde, opts, richest);
    if (!gateOpen(richFit, X, negYTilde, opts.mean)) return richFit;
  }
  // Every basis the count rule allows (one per size: at d = 1 the diagonal and full bases coincide),
  // each with its own MAP fit, scored by the LOO predictive log likelihood on the same targets.
  const scored: { fit: FitOutcome; total: number; terms: Float64Array | null }[] = [];
  const seen = new Set<number>();
  for (const kind of BASES_POOREST_FIRST) {
    const p = basisSize(kind, d);
    if (seen.has(p) || X.length < 1.5 * p) continue;
    // 'loo-constant': only the count rule's basis and the constant mean are candidates.
    if ((sel === 'loo-constant' || sel === 'loo-gated') && kind !== 'constant' && kind !== richest) continue;
    seen.add(p);
    const fit = richFit && kind === richest ? richFit : fitBasis(X, negYTilde, opts, kind);
    const H = basisMatrix(kind, toMat(X), opts.mean.centre, lowerInverse(cholesky(fromRows(opts.mean.cov)).L));
    const loo = looPredictive(fit.model.L, H, negYTilde);
    if (loo) scored.push({ fit, total: loo.total, terms: loo.terms });
    else if (kind === 'constant') scored.push({ fit, total: -Infinity, terms: null });
  }
  let best = scored[0];
  for (const s of scored) if (s.total > best.total) best = s;
  // The poorest basis whose score is within k standard errors of the best's (the k-SE rule on the
  // pointwise LOO differences, Vehtari, Gelman & Gabry 2017): a richer mean is used only when the
  // data show it predicts better, not when the difference is within the LOO estimate's own noise.
  const k = opts.mean.looSe ?? 0;
  if (best.terms && k > 0) {
    const n = best.terms.length;
    for (const s of scored) {
      if (s === best) break;
      if (!s.terms) continue;
      let m = 0, v = 0;
      for (let i = 0; i < n; i++) m += (best.terms[i] - s.terms[i]) / n;
      for (let i = 0; i < n; i++) v += (best.terms[i] - s.terms[i] - m) ** 2;
      const se = Math.sqrt((n * v) / Math.max(n - 1, 1));
      if (best.total - s.total <= k * se) {
        best = s;
        break;
      }
    }
  }
  return best.fit;
}

/**
 * docs/ALGORITHM-default.md §M: whether the constant mean is a candidate besides the count rule's basis
 * (fit `rich`): ν is wide (max_i √Σ_ii ≥ τ, prior units), the residual GP varies within ν
 * (min_i ℓ_i/√Σ_ii < κ) and the basis explains little of the targets (R² < ρ).
 */
function gateOpen(rich: FitOutcome, X: number[][], z: number[], mean: MeanSpec): boolean {
  const gate = mean.gate ?? { wide: 0, scale: Infinity, r2: 1 };
  const d = mean.cov.length;
  let wide = 0, ratio = Infinity;
  for (let i = 0; i < d; i++) {
    const s = Math.sqrt(mean.cov[i][i]);
    wide = Math.max(wide, s);
    ratio = Math.min(ratio, rich.model.hyper.lengthscales[i] / s);
  }
  return wide >= gate.wide && ratio < gate.scale && basisR2(rich, X, z) < gate.r2;
}

/** R² = 1 − ‖z − m(U)‖²/‖z − z̄‖² of the basis part m of a fit (1 without a basis or without spread). */
function basisR2(fit: FitOutcome, X: number[][], z: number[]): number {
  const q = fit.quad;
  if (!q) return 1;
  const n = z.length;
  let zbar = 0;
  for (const v of z) zbar += v / n;
  let ss = 0, res = 0;
  for (let j = 0; j < n; j++) {
    const u = X[j];
    let m = q.a0;
    for (let i = 0; i < u.length; i++) {
      const di = u[i] - q.centre[i];
      m += q.b[i] * di;
      for (let k = 0; k < u.length; k++) m += di * q.A[i][k] * (u[k] - q.centre[k]);
    }
    res += (z[j] - m) ** 2;
    ss += (z[j] - zbar) ** 2;
  }
  return ss > 0 ? 1 - res / ss : 1;
}

const BASES_POOREST_FIRST: readonly BasisKind[] = ['constant', 'linear', 'diagonal', 'full'];

/** The MAP fit with one basis: 'constant' is the GP of ALGORITHM.md §2, bit for bit. */
function fitBasis(
  X: number[][],
  negYTilde: number[],
  opts: { warmStart: GpHyper | null; coldStart?: boolean; restarts: number; rng: Rng; mean?: MeanSpec },
  basis: BasisKind,
): FitOutcome {
  const d = X[0].length;
  const priors = probnesPriors(d);
  if (basis === 'constant' || !opts.mean) {
    const fit = fitGp(X, negYTilde, { priors, warmStart: opts.warmStart, coldStart: opts.coldStart, restarts: opts.restarts, rng: opts.rng });
    return { model: fit.model, quad: null, basis: 'constant', objective: fit.objective, fallbackReason: fit.fallbackReason };
  }
  const W = lowerInverse(cholesky(fromRows(opts.mean.cov)).L);
  const Xm = toMat(X);
  const H = basisMatrix(basis, Xm, opts.mean.centre, W);
  const fit = fitGp(Xm, negYTilde, { priors, warmStart: opts.warmStart, coldStart: opts.coldStart, restarts: opts.restarts, rng: opts.rng, basis: H });
  const quad = quadraticFromBasis(basis, fit.beta!, opts.mean.centre, W);
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

/**
 * §5 batch BQ: among M candidate batches from ν, the one maximising a(B) = τᵀ K̄⁻¹ τ over
 * U_A ∪ pending ∪ B, i.e. minimising the posterior variance of the integral under ν. Pending
 * points need no y, so they simply join U_A. With `pool.size` > 0 (default profile) the candidates
 * are `pool.size` points drawn from ν, whose kernel rows and solves are paid once per point instead
 * of once per point of every batch; the batch is then either built greedily (batch.ts
 * `selectGreedy`) or the best of M random batches of distinct pool points (`random-batches`).
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
): number[][] {
  const d = mean.length;
  const row = (P: Mat, i: number) => Array.from(P.data.subarray(i * d, (i + 1) * d));
  if (pool.size > 0) {
    const P = drawCandidateBatchesStacked(mean, cov, 1, Math.max(pool.size, size), rng);
    const selector = prepareBatchSelection(model, mean, cov, pending);
    if (pool.selection === 'greedy') return selector.selectGreedy(P, size).rows.map((i) => row(P, i));
    const batches = poolBatches(P.rows, size, m, rng);
    const best = selector.selectBestOfPool(P, size, batches).index;
    return Array.from(batches.subarray(best * size, (best + 1) * size), (i) => row(P, i));
  }
  const P = drawCandidateBatchesStacked(mean, cov, size, m, rng);
  const sel = prepareBatchSelection(model, mean, cov, pending);
  const best = sel.selectBestStacked(P, size).index;
  return Array.from({ length: size }, (_, i) => row(P, best * size + i));
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
