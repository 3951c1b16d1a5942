/**
 * Exponential NES (Glasmachers et al. 2010; Wierstra et al. 2014, Algorithm 5) in the single
 * learning-rate form of ALGORITHM.md §6:
 *   x_k = μ + A z_k,  z_k ~ N(0, I)
 *   μ ← μ + η_μ A Σ_k u_k z_k
 *   A ← A · expm(½ η_M Σ_k u_k (z_k z_kᵀ − I))
 * with the NES utilities u_k of es-utils (rank-based, sum 0), η_μ = 1 and
 * η_M = 0.6 (3 + ln d)/(d√d) by default (options learning_rate_mean / learning_rate_cov).
 *
 * Glossary: d = `dim`; μ = `mean` (d); A (d×d, number[][]) the sampling factor, Σ = A Aᵀ = `cov`.
 *
 * `tell` recovers z_k = A⁻¹(x_k − μ) from the points actually evaluated (they may have been
 * projected onto bounds), computed as Aᵀ Σ⁻¹ (x_k − μ) through a Cholesky factor of Σ; the utilities
 * are recomputed for the size of the told batch.
 *
 * The distribution stays in the study's box (bounds.ts): after each update μ is projected onto it
 * and A is scaled so that no marginal standard deviation exceeds its coordinate's width. Points are
 * projected onto the bounds before they are evaluated, so a projected point's z is clipped (below)
 * while a genuine sample's is not; with the good points often projected (an optimum near a face)
 * and the bad ones genuine, Σ u_k z_k pointed out of the box, and without the projection μ walked
 * away from it: on Branin (batch 4, 10 seeds) μ left the box in 7 of 10 runs within 600 evaluations,
 * after which every point was projected onto one corner.
 *
 * Points that are not bit-for-bit one of this generation's asked samples (projected onto the
 * bounds, or rounded) are treated as injected solutions, as cmaes.ts does: their z is clipped to
 * ‖z‖ ≤ √d + 2d/(d+2) (Hansen 2011, "Injecting external solutions into CMA-ES", arXiv:1110.4181).
 * Without the clip, a sample projected across a thin direction of an elongated Σ has an enormous
 * z there; z zᵀ then dominates G, expm(½ η_M G) squeezes A to a singular matrix within a few
 * generations (a covariance that is no longer positive definite) or overflows outright.
 *
 * Categorical parameters (InitSpec.categories; ALGORITHM.md §27): the update above runs on the d_c
 * continuous coordinates (μ, A, Σ and the box are d_c-dimensional), with the utilities of the whole
 * points' values, and each categorical parameter has a distribution q_j updated as CatCMA's
 * (es-categorical.ts); a point is [x, c]. A conditional space (§30) needs nothing more: an inactive
 * coordinate is drawn like any other and does not change the value, so the ranking ignores it. A
 * state without `categorical` is the numeric method, unchanged draw for draw.
 */
import { Rng } from '../random/index.js';
import { type Bounds, clampToBounds, limitCovToBounds, storedBounds } from './bounds.js';
import { cholSolve, cholesky, fromRows, matMul, matMulT, symEig, symExpm, symFunction, toRows, type Mat } from '../linalg/index.js';
import type { AskContext, AskResult, BaseState, InitSpec, StrategyDescriptor, TellContext } from './types.js';
import { checkedOptions, etaCov, etaMean, type OptionSpecs } from './options.js';
import {
  NO_DIAGNOSTICS, assertFinite, assertFiniteRows, checkBatch, checkCount, checkDim, identityRows, migrateOptionsState, nesParams, nesUtilities, zerosVec, type NesParams,
} from './es-utils.js';
import { mixedLayout, sampleChoices } from '../distributions/categorical.js';
import type { AsngState } from './cma-core.js';
import { startCategorical } from './catcma.js';
import { continuousBox, continuousDim, mixedStep } from './es-categorical.js';

/**
 * Version 2: `params` instead of the options. Version 3: `bounds` (null in older states, which keep
 * their unbounded behaviour). `migrate` reads both.
 */
export const XNES_STATE_VERSION = 3;
/** The utilities rank a generation's points: one point alone carries no ranking. */
const MIN_BATCH = 2;
/** Smallest eigenvalue of Σ relative to the largest (the ProbNES covariance updates use the same floor). */
const EIGEN_FLOOR = 1e-12;

/**
 * A with every eigenvalue of A Aᵀ at least EIGEN_FLOOR·λ_max: A itself when it already is, else
 * the symmetric square root of the floored Σ. Replacing A by A Q (Q orthogonal) leaves the search
 * distribution and every later update unchanged up to that rotation (z → Qᵀ z, G → Qᵀ G Q), so
 * only the floor acts. Even with injected points clipped, samples projected onto the bounds keep
 * pushing the same way generation after generation and can squeeze Σ past any condition number
 * (a 2-d study at the box's edge reached 1e18 in 45 generations), after which Σ is no longer
 * positive definite in floating point.
 */
function floorCondition(A: Mat): Mat {
  const { values } = symEig(matMulT(A, A));
  const lmax = Math.max(values[values.length - 1], 0);
  if (values[0] >= EIGEN_FLOOR * lmax && lmax > 0) return A;
  const floor = lmax > 0 ? EIGEN_FLOOR * lmax : 1e-300;
  return symFunction(matMulT(A, A), (l) => Math.sqrt(Math.max(l, floor)));
}

/**
 * A and Σ = A Aᵀ (as rows) with Σ limited to the box (limitCovToBounds: Σ' = D Σ D, each marginal
 * standard deviation at most its coordinate's width), A as A' = D A: the same congruence on the factor.
 */
function withinBox(A: Mat, bounds: Bounds | null): { A: Mat; cov: number[][] } {
  const cov = toRows(matMulT(A, A));
  const limited = bounds ? limitCovToBounds(cov, bounds) : cov;
  if (limited === cov) return { A, cov };
  const d = A.rows;
  const D = cov.map((row, i) => Math.sqrt(limited[i][i] / row[i]));
  return { A: { rows: d, cols: d, data: Float64Array.from(A.data, (a, k) => D[Math.floor(k / d)] * a) }, cov: limited };
}

export interface XnesState extends BaseState {
  method: 'xnes';
  params: NesParams;
  A: number[][];
  /** The study's box in internal coordinates (InitSpec.box); null: none, or a state of version ≤ 2. */
  bounds: Bounds | null;
  /**
   * Points handed out since the last tell (their continuous coordinates), to tell genuine samples
   * from injected ones. Absent in states stored before it existed: every point of that generation
   * then counts as injected.
   */
  asked?: number[][];
  /** With categorical parameters: ASNG's state of the categorical update (catcma.ts); absent otherwise. */
  asng?: AsngState;
}

function defaultEtaM(d: number): number {
  return (0.6 * (3 + Math.log(d))) / (d * Math.sqrt(d));
}

function init(spec: InitSpec, rng: Rng): XnesState {
  checkDim(spec.dim, spec.batchSize, 'xnes', MIN_BATCH);
  const d = spec.dim;
  const params = nesParams(checkedOptions('xnes', XNES_OPTIONS, spec.options), defaultEtaM(d));
  const q = spec.categories ?? [];
  const dc = continuousDim(spec, 'xnes');
  // Start from the prior N(0, I) of the whitened coordinates (ALGORITHM.md §0).
  return {
    version: XNES_STATE_VERSION, method: 'xnes', dim: d, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), params, mean: zerosVec(dc), cov: identityRows(dc),
    diagnostics: { ...NO_DIAGNOSTICS }, A: identityRows(dc), bounds: storedBounds(continuousBox(spec.box, dc)), asked: [],
    ...(q.length > 0 ? startCategorical(q) : {}),
  };
}

function ask(state: XnesState, _ctx: AskContext, count: number): AskResult<XnesState> {
  checkCount(count, 'xnes');
  const rng = Rng.fromState(state.rng);
  const { dc } = mixedLayout(state);
  const points: number[][] = [];
  for (let k = 0; k < count; k++) {
    const z = rng.normals(dc);
    const x = state.mean.map((m, i) => m + state.A[i].reduce((s, a, j) => s + a * z[j], 0));
    assertFinite(x, 'xnes: sampled point');
    points.push(state.categorical ? [...x, ...sampleChoices(rng, state.categorical)] : x);
  }
  // `asked` keeps its own copies: callers may project the returned points in place.
  return { points, state: { ...state, rng: rng.state(), asked: [...(state.asked ?? []), ...points.map((p) => p.slice(0, dc))] } };
}

function tell(state: XnesState, ctx: TellContext): XnesState {
  checkBatch(ctx.batch, state.dim, 'xnes');
  const u = nesUtilities(ctx.batch);
  // With categorical parameters: the Gaussian's update on the continuous coordinates, CatCMA's on q (es-categorical.ts).
  return { ...state, ...mixedStep(state, ctx.batch, (xs) => gaussianStep(state, xs, u)), generation: state.generation + 1, asked: [] };
}

/** One update of μ, A and Σ = A Aᵀ from the continuous coordinates `xs` of the told points and their utilities `u`. */
function gaussianStep(state: XnesState, xs: readonly number[][], u: readonly number[]): Pick<XnesState, 'mean' | 'A' | 'cov'> {
  const d = state.mean.length;
  const { etaMean, etaCov: etaM } = state.params;
  const A = fromRows(state.A);
  const { L } = cholesky(fromRows(state.cov));
  const asked = new Set((state.asked ?? []).map((a) => a.join(',')));
  const cz = Math.sqrt(d) + (2 * d) / (d + 2);

  // z_k = A⁻¹ (x_k − μ) = Aᵀ Σ⁻¹ (x_k − μ), since Σ = A Aᵀ.
  const gradMean = zerosVec(d); // Σ u_k z_k
  const G = zerosVec(d * d); // Σ u_k (z_k z_kᵀ − I), row-major
  xs.forEach((x, k) => {
    const s = cholSolve(L, x.map((xi, i) => xi - state.mean[i]));
    const z = zerosVec(d);
    for (let j = 0; j < d; j++) for (let i = 0; i < d; i++) z[j] += A.data[i * d + j] * s[i];
    if (!asked.has(x.join(','))) {
      const len = Math.hypot(...z);
      if (len > cz) for (let i = 0; i < d; i++) z[i] *= cz / len;
    }
    for (let i = 0; i < d; i++) {
      gradMean[i] += u[k] * z[i];
      for (let j = 0; j < d; j++) G[i * d + j] += u[k] * (z[i] * z[j] - (i === j ? 1 : 0));
    }
  });

  // μ ← μ + η_μ A Σ u_k z_k (A before its update, as in the natural-gradient step).
  const step = state.A.map((row) => row.reduce((s, a, j) => s + a * gradMean[j], 0));
  const moved = state.mean.map((m, i) => m + etaMean * step[i]);
  const mean = state.bounds ? clampToBounds(moved, state.bounds) : moved;
  // A ← A expm(½ η_M G): symExpm throws a typed NonFiniteError on overflow.
  const half = { rows: d, cols: d, data: Float64Array.from(G, (g) => 0.5 * etaM * g) };
  const { A: Anew, cov: covRows } = withinBox(floorCondition(matMul(A, symExpm(half))), state.bounds);

  const ARows = toRows(Anew);
  // Σ = A Aᵀ is symmetric in exact arithmetic; make it so in floating point too (ALGORITHM.md §8).
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) covRows[i][j] = covRows[j][i] = 0.5 * (covRows[i][j] + covRows[j][i]);
  assertFinite(mean, 'xnes: mean');
  assertFiniteRows(ARows, 'xnes: A');
  assertFiniteRows(covRows, 'xnes: cov');
  return { mean, A: ARows, cov: covRows };
}

const XNES_OPTIONS: OptionSpecs = { learning_rate_mean: etaMean, learning_rate_cov: etaCov };

export const xnes: StrategyDescriptor<XnesState> = {
  name: 'xnes',
  options: XNES_OPTIONS,
  defaults: (d) => ({ learning_rate_mean: 1, learning_rate_cov: defaultEtaM(d) }),
  minBatch: MIN_BATCH,
  usesBox: true,
  categorical: true,
  stateVersion: XNES_STATE_VERSION,
  migrate: (stored) => migrateOptionsState<XnesState>('xnes', XNES_STATE_VERSION, stored, (o) => nesParams(o, defaultEtaM(Number(stored.dim))), { bounds: null }),
  init,
  ask,
  tell,
};
