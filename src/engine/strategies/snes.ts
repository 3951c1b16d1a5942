/**
 * Separable NES (Schaul, Glasmachers & Schmidhuber 2011; Wierstra et al. 2014, Algorithm 6) as
 * specified in ALGORITHM.md §6:
 *   x_k = μ + σ ⊙ z_k,  z_k ~ N(0, I)
 *   μ ← μ + η_μ Σ_k u_k (x_k − μ)
 *   σ ← σ ⊙ exp(½ η_σ Σ_k u_k (z_k² − 1))
 * with the NES utilities u_k of es-utils (rank-based, sum 0), η_μ = 1 and
 * η_σ = 0.2 (3 + ln d)/√d by default (options learning_rate_mean / learning_rate_cov).
 *
 * Glossary: d = `dim`; μ = `mean` (d); σ = `sigma` (d, per-coordinate standard deviations);
 * `cov` = diag(σ²).
 *
 * `tell` recovers z_k = (x_k − μ)/σ from the points actually evaluated (they may have been
 * projected onto bounds); the utilities are recomputed for the size of the told batch.
 *
 * The distribution stays in the study's box (bounds.ts): after each update μ is projected onto it
 * and each σ_i is at most its coordinate's width. Points are evaluated projected onto the bounds,
 * and without it μ walked out of the box (on Branin, batch 6, 10 seeds: in 6 of 10 runs within 600
 * evaluations), after which every point was projected onto one face or corner.
 *
 * Categorical parameters (InitSpec.categories; ALGORITHM.md §27): the update above runs on the d_c
 * continuous coordinates (μ, σ and the box are d_c-dimensional), with the utilities of the whole
 * points' values, and each categorical parameter has a distribution q_j updated as CatCMA's
 * (es-categorical.ts); a point is [x, c]. A conditional space (§30) needs nothing more: an inactive
 * coordinate is drawn like any other and does not change the value, so the ranking ignores it. A
 * state without `categorical` is the numeric method, unchanged draw for draw.
 */
import { Rng } from '../random/index.js';
import { type Bounds, clampToBounds, storedBounds } from './bounds.js';
import type { AskContext, AskResult, BaseState, InitSpec, StrategyDescriptor, TellContext } from './types.js';
import { checkedOptions, etaCov, etaMean, type OptionSpecs } from './options.js';
import { NO_DIAGNOSTICS, assertFinite, checkBatch, checkCount, checkDim, migrateOptionsState, nesParams, nesUtilities, zerosVec, type NesParams } from './es-utils.js';
import { NonFiniteError } from '../errors.js';
import { mixedLayout, sampleChoices } from '../distributions/categorical.js';
import type { AsngState } from './cma-core.js';
import { startCategorical } from './catcma.js';
import { continuousBox, continuousDim, mixedStep } from './es-categorical.js';

/**
 * Version 2: `params` instead of the options. Version 3: `bounds` (null in older states, which keep
 * their unbounded behaviour). `migrate` reads both.
 */
export const SNES_STATE_VERSION = 3;
/** The utilities rank a generation's points: one point alone carries no ranking. */
const MIN_BATCH = 2;

export interface SnesState extends BaseState {
  method: 'snes';
  params: NesParams;
  sigma: number[];
  /** The study's box in internal coordinates (InitSpec.box); null: none, or a state of version ≤ 2. */
  bounds: Bounds | null;
  /** With categorical parameters: ASNG's state of the categorical update (catcma.ts); absent otherwise. */
  asng?: AsngState;
}

function defaultEtaSigma(d: number): number {
  return (0.2 * (3 + Math.log(d))) / Math.sqrt(d);
}

const diagRows = (sigma: readonly number[]): number[][] => sigma.map((s, i) => sigma.map((_, j) => (i === j ? s * s : 0)));

function init(spec: InitSpec, rng: Rng): SnesState {
  checkDim(spec.dim, spec.batchSize, 'snes', MIN_BATCH);
  const d = spec.dim;
  const params = nesParams(checkedOptions('snes', SNES_OPTIONS, spec.options), defaultEtaSigma(d));
  const q = spec.categories ?? [];
  const dc = continuousDim(spec, 'snes');
  const sigma = new Array<number>(dc).fill(1); // the prior N(0, I) of the whitened coordinates (§0)
  return {
    version: SNES_STATE_VERSION, method: 'snes', dim: d, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), params, mean: zerosVec(dc), cov: diagRows(sigma),
    diagnostics: { ...NO_DIAGNOSTICS }, sigma, bounds: storedBounds(continuousBox(spec.box, dc)),
    ...(q.length > 0 ? startCategorical(q) : {}),
  };
}

function ask(state: SnesState, _ctx: AskContext, count: number): AskResult<SnesState> {
  checkCount(count, 'snes');
  const rng = Rng.fromState(state.rng);
  const { dc } = mixedLayout(state);
  const points: number[][] = [];
  for (let k = 0; k < count; k++) {
    const z = rng.normals(dc);
    const x = state.mean.map((m, i) => m + state.sigma[i] * z[i]);
    assertFinite(x, 'snes: sampled point');
    points.push(state.categorical ? [...x, ...sampleChoices(rng, state.categorical)] : x);
  }
  return { points, state: { ...state, rng: rng.state() } };
}

function tell(state: SnesState, ctx: TellContext): SnesState {
  checkBatch(ctx.batch, state.dim, 'snes');
  const u = nesUtilities(ctx.batch);
  // With categorical parameters: the Gaussian's update on the continuous coordinates, CatCMA's on q (es-categorical.ts).
  return { ...state, generation: state.generation + 1, ...mixedStep(state, ctx.batch, (xs) => gaussianStep(state, xs, u)) };
}

/** One update of μ and σ from the continuous coordinates `xs` of the told points and their utilities `u`. */
function gaussianStep(state: SnesState, xs: readonly number[][], u: readonly number[]): Pick<SnesState, 'mean' | 'sigma' | 'cov'> {
  const d = state.mean.length;
  const { etaMean, etaCov: etaSigma } = state.params;
  const gMean = zerosVec(d); // Σ u_k (x_k − μ)
  const gSigma = zerosVec(d); // Σ u_k (z_k² − 1)
  xs.forEach((x, k) => {
    for (let i = 0; i < d; i++) {
      const dx = x[i] - state.mean[i];
      const z = dx / state.sigma[i];
      gMean[i] += u[k] * dx;
      gSigma[i] += u[k] * (z * z - 1);
    }
  });
  const moved = state.mean.map((m, i) => m + etaMean * gMean[i]);
  const grown = state.sigma.map((s, i) => s * Math.exp(0.5 * etaSigma * gSigma[i]));
  const { bounds } = state;
  const mean = bounds ? clampToBounds(moved, bounds) : moved;
  const sigma = bounds ? grown.map((s, i) => (bounds.lower[i] !== null && bounds.upper[i] !== null ? Math.min(s, bounds.upper[i]! - bounds.lower[i]!) : s)) : grown;
  assertFinite(mean, 'snes: mean');
  assertFinite(sigma, 'snes: sigma');
  // An underflow to 0 would make the next z = (x − μ)/σ a NaN: fail loudly instead (ALGORITHM.md §8).
  if (!sigma.every((s) => s > 0)) throw new NonFiniteError('snes: sigma underflowed to 0');
  const cov = diagRows(sigma);
  assertFinite(cov.flat(), 'snes: cov');
  return { mean, sigma, cov };
}

const SNES_OPTIONS: OptionSpecs = { learning_rate_mean: etaMean, learning_rate_cov: etaCov };

export const snes: StrategyDescriptor<SnesState> = {
  name: 'snes',
  options: SNES_OPTIONS,
  defaults: (d) => ({ learning_rate_mean: 1, learning_rate_cov: defaultEtaSigma(d) }),
  minBatch: MIN_BATCH,
  usesBox: true,
  categorical: true,
  stateVersion: SNES_STATE_VERSION,
  migrate: (stored) => migrateOptionsState<SnesState>('snes', SNES_STATE_VERSION, stored, (o) => nesParams(o, defaultEtaSigma(Number(stored.dim))), { bounds: null }),
  init,
  ask,
  tell,
};
