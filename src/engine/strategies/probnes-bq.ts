/**
 * The ProbNES strategies' single door to the GP and quadrature modules (ALGORITHM.md §2, §3, §5):
 * everything the loop in probnes-core.ts needs, with JSON-friendly inputs (number[][]).
 *
 * Glossary (shapes): d = dimension, n = active points, q' = points selected by BQ, M = candidate
 * batches; mean μ (d), cov Σ (d×d); X = U_A (n×d); negYTilde (n) the GP targets −ỹ (maximised);
 * gMean g_μ (d), gCov G (d×d) = ∂E_ν[−ỹ]/∂(μ, Σ) in standardised units. The gradients come back
 * as plain rows (`…Rows`) where the quadrature module returns typed arrays.
 */
import { type GpHyper, type GpModel, buildModel, fitGp, predict, probnesPriors, toMat } from '../gp/index.js';
import { type Mat, cholesky, fromRows, toRows, zeros } from '../linalg/index.js';
import { type Rng, sampleMvn } from '../random/index.js';
import { bqIntegral, expectedGradient, prepareBatchSelection, sampledGradient } from '../quadrature/index.js';

export type { GpModel };

export interface Gradient {
  gMean: number[];
  gCov: number[][];
}

/** The GP at fixed hyperparameters (ask and estimate rebuild it from the stored MAP). */
export function rebuildModel(hyper: GpHyper, X: number[][], negYTilde: number[]): GpModel {
  return buildModel(toMat(X), negYTilde, hyper);
}

export interface FitOutcome {
  model: GpModel;
  objective: number;
  fallbackReason: string | null;
}

/** MAP fit with the ProbNES priors (§2); the warm start, when given, is one more start. */
export function fitModel(X: number[][], negYTilde: number[], opts: { warmStart: GpHyper | null; restarts: number; rng: Rng }): FitOutcome {
  const d = X[0].length;
  const fit = fitGp(X, negYTilde, { priors: probnesPriors(d), warmStart: opts.warmStart, restarts: opts.restarts, rng: opts.rng });
  return { model: fit.model, objective: fit.objective, fallbackReason: fit.fallbackReason };
}

/** §3 closed form: the expected gradient (g_μ, G) of E_ν[−ỹ]. */
export function expectedGradientRows(model: GpModel, mean: number[], cov: number[][]): Gradient {
  const g = expectedGradient(model, mean, cov);
  return { gMean: Array.from(g.gradMean), gCov: toRows(g.gradCov) };
}

/** §3 ablation: score-function estimate on one joint GP posterior sample at N draws from ν. */
export function sampledGradientRows(model: GpModel, mean: number[], cov: number[][], rng: Rng, n: number): Gradient {
  const g = sampledGradient(model, mean, cov, rng, n);
  return { gMean: Array.from(g.gradMean), gCov: toRows(g.gradCov) };
}

/** E_ν[−ỹ] and its posterior variance V = R − tᵀK⁻¹t (standardised units). */
export function integralMoments(model: GpModel, mean: number[], cov: number[][]): { mean: number; variance: number } {
  const b = bqIntegral(model, mean, cov);
  return { mean: b.mean, variance: b.variance };
}

/** Latent posterior mean and variance of −ỹ at one point. */
export function predictAt(model: GpModel, x: number[]): { mean: number; variance: number } {
  const p = predict(model, [x]);
  return { mean: p.mean[0], variance: p.variance[0] };
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

/**
 * §5 batch BQ: among M candidate batches from ν, the one maximising a(B) = τᵀ K̄⁻¹ τ over
 * U_A ∪ pending ∪ B, i.e. minimising the posterior variance of the integral under ν. Pending
 * points need no y, so they simply join U_A.
 */
export function selectBatch(
  model: GpModel,
  mean: number[],
  cov: number[][],
  pending: number[][],
  size: number,
  m: number,
  rng: Rng,
): number[][] {
  const P = drawCandidateBatchesStacked(mean, cov, size, m, rng);
  const selector = prepareBatchSelection(model, mean, cov, pending);
  const best = selector.selectBestStacked(P, size).index;
  const d = mean.length;
  return Array.from({ length: size }, (_, i) => Array.from(P.data.subarray((best * size + i) * d, (best * size + i + 1) * d)));
}
