/**
 * Shared machinery of the BO and πBO baselines (ALGORITHM.md §6): one GP on box-normalised inputs,
 * greedy batch expected improvement, optional prior weighting. bo.ts and pibo.ts only pick the
 * weight β (0 for BO, so πBO with β = 0 reproduces BO exactly, draw for draw).
 *
 * Coordinates. u: the whitened internal space (prior N(0, I)); box [lower, upper] = InitSpec.box,
 * else [−box_std, box_std]^d (prior mean ± box_std prior std); x = (u − lower)/(upper − lower) ∈
 * [0, 1]^d: the GP's inputs, so BO's legacy priors (ℓ ~ Gamma(3, 6), s ~ Gamma(2, 0.15)) mean what
 * they meant in BoTorch. y is standardised over all history (ỹ = (y − mean)/std, unbiased std).
 *
 * Initial design. Until two observations exist there is no GP: points are drawn from the prior
 * ν_0 = N(0, I) and clipped to the box, so that every method of the benchmark shares the same kind of
 * first batch (the paper protocol: N0 = q prior draws) rather than BO's usual uniform design.
 *
 * Acquisition (log space throughout, so EI far below machine precision still ranks candidates and
 * πBO's factor is an addition):  a(x) = log Δ_P(x) + w·log π(u(x)),  w = β/n,
 * n = max(1, generation) (the generation index, counted from 1 at the first model-based batch), and
 * Δ_P(x) = q-EI(P ∪ {x}) − q-EI(P) the gain of adding x to the points P already in the batch.
 * The batch is built greedily (sequential q-EI, as BoTorch's sequential optimisation): P starts as
 * the pending points, each new point maximises a(x), then joins P. Since q-EI(P) is fixed, BO's
 * choice is exactly argmax q-EI(P ∪ {x}). With P empty (q = 1, or the first point of a batch with
 * no pending points) Δ is the analytic EI, optimised with its analytic gradient; otherwise Δ is
 * estimated with mc_samples fixed base samples for P (ei.ts logQEiGain), optimised with finite
 * differences. πBO weights each point's own gain by its own prior factor: weighting the whole
 * q-EI(P ∪ {x}) instead would let the constant q-EI(P) swamp the gain, and the later points of a
 * batch would all collapse onto the prior mode.
 *
 * Candidates: `candidates` points per batch, 90% uniform in the box and 10% Gaussian around the
 * incumbent (std 0.05 of the box width): uniform draws alone almost never land close enough to the
 * best point to refine it in d = 10. The best few (per greedy step) are refined by projected L-BFGS.
 *
 * State: BaseState.mean = the best observed point (the prior mean before any data), cov = the prior
 * I (BO has no search distribution; ALGORITHM.md §0 makes the prior N(0, I)). The GP hyperparameters
 * are refitted in tell (MAP, warm-started from the previous ones) and stored as plain JSON; ask
 * conditions the GP on the history it is given with the stored hyperparameters (fitting only if
 * there are none yet).
 */
import { InvalidInputError } from '../errors.js';
import { fromRows } from '../linalg/index.js';
import { Rng } from '../random/index.js';
import { boPriors, buildModel, fitGp, predict, type GpHyper, type GpModel } from '../gp/index.js';
import { fixBatch, logEiFromPosterior, logQEiGain, type BaseSamples } from '../acquisition/ei.js';
import { pointPosterior, type PointPosterior } from '../acquisition/posterior.js';
import { maximizeInBox } from '../acquisition/optimize.js';
import type { AskContext, AskResult, BaseState, Estimate, InitSpec, Observation, TellContext } from './types.js';
import type { MethodName } from './methods.js';
import { standardise } from './probnes-data.js';
import { checkDim, migrateOptionsState } from './es-utils.js';
import { checkedOptions, type Options, type OptionSpecs } from './options.js';
import type { StoredState } from './types.js';

/** Version 2: `params` instead of the options (version 1 is read by `migrate`). */
export const BO_STATE_VERSION = 2;

/**
 * BO's and πBO's parameters, resolved once at init: random candidates before refinement, Monte Carlo
 * samples of q-EI, the half-width of the box (prior standard deviations) where a parameter has no
 * bounds, and πBO's prior weight β (0 for BO).
 */
export interface BoParams {
  readonly candidates: number;
  readonly mcSamples: number;
  readonly boxStd: number;
  readonly beta: number;
}

/** The parameters for `options` (the defaults of options.ts BO_DEFAULTS; β = 1 for πBO, 0 for BO). */
export function boParams(method: MethodName, options: Options): BoParams {
  return Object.freeze({
    candidates: Number(options.candidates ?? 2000),
    mcSamples: Number(options.mc_samples ?? 256),
    boxStd: Number(options.box_std ?? 3),
    beta: method === 'pibo' ? Number(options.beta ?? 1) : 0,
  });
}

export function migrateBoState(method: MethodName, stored: StoredState): BoState {
  return migrateOptionsState<BoState>(method, BO_STATE_VERSION, stored, (o) => boParams(method, o));
}

export interface Box {
  lower: number[];
  upper: number[];
}

export interface BoState extends BaseState {
  params: BoParams;
  box: Box;
  /** MAP hyperparameters of the last fit (normalised inputs, standardised y), or null before one. */
  hyper: GpHyper | null;
  /** The configuration /best recommends, from the last tell's fit (absent before two results, and in states stored before it existed). */
  recommended?: BoRecommendation | null;
}

/**
 * BO has no search distribution whose centre could be recommended (`mean` is the best observed
 * point's continuous part only). Its recommendation is the evaluated configuration with the lowest
 * posterior mean (the in-sample minimiser of the model: under noise, not necessarily the lowest
 * observed value), with the model's prediction there in y units. Only evaluated configurations are
 * candidates, so the recommendation is always one the model has seen, never a prior mode.
 */
export interface BoRecommendation {
  /** Internal point (continuous coordinates, then choice indices on a mixed space). */
  x: number[];
  predicted: number;
  predicted_std: number;
}

/** Fraction of candidates drawn around the incumbent rather than uniformly. */
const LOCAL_FRACTION = 0.1;
const LOCAL_STD = 0.05;
/**
 * Local refinement budget. The analytic first point gets more (cheap exact gradients); the Monte
 * Carlo steps pay d + 1 posterior evaluations per gradient, and the profile showed them dominating
 * ask, so they get fewer starts and iterations.
 */
const REFINE_ANALYTIC = { starts: 5, maxIterations: 50 };
const REFINE_MC = { starts: 2, maxIterations: 25 };

export function initBo(method: MethodName, spec: InitSpec, rng: Rng, specs: OptionSpecs): BoState {
  const params = boParams(method, checkedOptions(method, specs, spec.options));
  checkDim(spec.dim, spec.batchSize, method);
  const d = spec.dim;
  const half = params.boxStd;
  const box = spec.box ? { lower: [...spec.box.lower], upper: [...spec.box.upper] } : { lower: new Array<number>(d).fill(-half), upper: new Array<number>(d).fill(half) };
  if (box.lower.length !== d || box.upper.length !== d || box.lower.some((l, j) => !(l < box.upper[j]))) {
    throw new InvalidInputError('BO needs a box with lower < upper in every dimension');
  }
  const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
  return {
    version: BO_STATE_VERSION, method, dim: d, batchSize: spec.batchSize, generation: 0, rng: rng.state(),
    params, mean: new Array<number>(d).fill(0), cov, box, hyper: null,
    diagnostics: { integral_mean: null, integral_std: null, n_active: null },
  };
}

const toUnit = (box: Box, u: ArrayLike<number>) => Array.from(u, (v, j) => (v - box.lower[j]) / (box.upper[j] - box.lower[j]));
const fromUnit = (box: Box, x: ArrayLike<number>) => Array.from(x, (v, j) => box.lower[j] + v * (box.upper[j] - box.lower[j]));
const clip = (box: Box, u: number[]) => u.map((v, j) => Math.min(box.upper[j], Math.max(box.lower[j], v)));

/**
 * ỹ = (y − mean)/std with the unbiased std (1 when it is < 1e-9 or there is a single point):
 * probnes-data's `standardise`, which cannot overflow on finite values near the top of the double
 * range (a direct (y − mean)² did, and every GP fit then failed).
 */
function standardiseY(ys: number[]): number[] {
  return standardise(ys).yTilde;
}

/** The index of the best (lowest) observation, the first one on ties. */
export function bestIndex(history: Observation[]): number {
  let b = 0;
  for (let i = 1; i < history.length; i++) if (history[i].y < history[b].y) b = i;
  return b;
}

function trainingData(state: BoState, history: Observation[]) {
  return { X: history.map((o) => toUnit(state.box, o.x)), y: standardiseY(history.map((o) => o.y)) };
}

function fit(state: BoState, history: Observation[]): GpModel {
  const { X, y } = trainingData(state, history);
  return fitGp(X, y, { priors: boPriors(), warmStart: state.hyper }).model;
}

/** log π(u) up to a constant for the prior N(0, I), and its gradient in unit-box coordinates. */
function logPrior(box: Box, x: ArrayLike<number>): { value: number; grad: Float64Array } {
  const u = fromUnit(box, x);
  const grad = new Float64Array(u.length);
  let value = 0;
  for (let j = 0; j < u.length; j++) {
    value -= 0.5 * u[j] * u[j];
    grad[j] = -u[j] * (box.upper[j] - box.lower[j]);
  }
  return { value, grad };
}

/** Redraws before a local candidate coordinate falls back to clipping (a draw 4+ std inside the box never needs one). */
const LOCAL_REDRAWS = 20;

/**
 * The acquisition's starting candidates: uniform in the unit box, plus LOCAL_FRACTION of them
 * Gaussian around the incumbent. A local coordinate that falls outside [0, 1] is redrawn (a
 * truncated normal), not clipped: clipping put about half of the local draws of an incumbent on a
 * face exactly on that face (three quarters near a corner in 2-D), so an incumbent on the box
 * boundary kept proposing the boundary again. Measured on StyblinskiTang 2-D (optimum 0.097 inside
 * the [−3, 3] box): with clipping 4 of 15 seeds ended exactly on an edge or corner, with redrawing 1 of 14.
 */
export function drawCandidates(rng: Rng, d: number, count: number, incumbent: readonly number[]): Float64Array[] {
  const nLocal = Math.round(count * LOCAL_FRACTION);
  const out: Float64Array[] = [];
  for (let i = 0; i < count; i++) {
    const x = new Float64Array(d);
    for (let j = 0; j < d; j++) {
      if (i >= nLocal) {
        x[j] = rng.uniform();
        continue;
      }
      let v = incumbent[j] + LOCAL_STD * rng.normal();
      for (let t = 0; t < LOCAL_REDRAWS && (v < 0 || v > 1); t++) v = incumbent[j] + LOCAL_STD * rng.normal();
      x[j] = Math.min(1, Math.max(0, v));
    }
    out.push(x);
  }
  return out;
}

/**
 * Monte Carlo gains are computed for candidates in decreasing order of their single-point bound
 * log EI(x) + prior (the gain of adding x never exceeds EI(x): min(b, min_P f) ≤ b), and the scan stops
 * once the bound falls this far (nats) below the worst value that would still be refined. The margin
 * covers the Monte Carlo error of the gain (the bound holds in expectation, not per sample). Most
 * candidates of a 2000-point scan are pruned, which the profile showed to be most of ask's time.
 */
const PRUNE_MARGIN = 1;

/** log EI + w·log π at every candidate: the first greedy step's scores and the later steps' bounds. */
function singlePointScores(state: BoState, cands: Float64Array[], posts: PointPosterior[], best: number, w: number): Float64Array {
  return Float64Array.from(posts, (p, i) => logEiFromPosterior(p, best).value + (w === 0 ? 0 : w * logPrior(state.box, cands[i]).value));
}

function prunedGainScores(bound: Float64Array, starts: number, gain: (i: number) => number): Float64Array {
  const order = Array.from(bound.keys()).sort((a, b) => bound[b] - bound[a]);
  const values = new Float64Array(bound.length).fill(-Infinity);
  const top: number[] = []; // the `starts` best values so far, descending
  for (const i of order) {
    if (top.length >= starts && bound[i] + PRUNE_MARGIN < top[top.length - 1]) break;
    values[i] = gain(i);
    top.push(values[i]);
    top.sort((a, b) => b - a);
    if (top.length > starts) top.pop();
  }
  return values;
}

/** The greedy batch described in the header, in unit-box coordinates. */
function selectBatch(state: BoState, model: GpModel, rng: Rng, pending: number[][], count: number, incumbent: number[], best: number, w: number): number[][] {
  const d = state.dim;
  const S = state.params.mcSamples;
  const base: BaseSamples = Array.from({ length: S }, () => rng.normals(pending.length + count));
  const cands = drawCandidates(rng, d, state.params.candidates, incumbent);
  const candPosts = cands.map((x) => pointPosterior(model, x));
  const single = singlePointScores(state, cands, candPosts, best, w);
  const prior = (x: ArrayLike<number>) => (w === 0 ? 0 : w * logPrior(state.box, x).value);
  const fixed: number[][] = pending.map((u) => toUnit(state.box, u));
  let fixedPosts: PointPosterior[] = fixed.map((x) => pointPosterior(model, x));
  const chosen: number[][] = [];
  for (let k = 0; k < count; k++) {
    let result;
    if (fixed.length === 0) {
      // Analytic EI: exact, smooth, with an analytic gradient.
      const score = (x: Float64Array) => logEiFromPosterior(pointPosterior(model, x), best).value + prior(x);
      const scoreGrad = (x: Float64Array) => {
        const e = logEiFromPosterior(pointPosterior(model, x, true), best);
        const g = e.grad!;
        if (w !== 0) {
          const lp = logPrior(state.box, x);
          for (let j = 0; j < d; j++) g[j] += w * lp.grad[j];
        }
        return { value: e.value + prior(x), grad: g };
      };
      result = maximizeInBox(score, scoreGrad, cands, single, REFINE_ANALYTIC);
    } else {
      const fb = fixBatch(model, fixed, base, fixedPosts);
      const values = prunedGainScores(single, REFINE_MC.starts, (i) => logQEiGain(model, fb, cands[i], candPosts[i], best, base) + prior(cands[i]));
      const score = (x: Float64Array) => logQEiGain(model, fb, x, pointPosterior(model, x), best, base) + prior(x);
      result = maximizeInBox(score, null, cands, values, REFINE_MC);
    }
    const xs = Array.from(result.x);
    fixed.push(xs);
    fixedPosts = [...fixedPosts, pointPosterior(model, xs)];
    chosen.push(xs);
  }
  return chosen;
}

/** A JSON-plain copy (the fit may hand back typed arrays or shared references). */
export function plainHyper(h: GpHyper): GpHyper {
  return { lengthscales: Array.from(h.lengthscales), outputscale: h.outputscale, noise: h.noise, constant: h.constant };
}

export function askBo(state: BoState, ctx: AskContext, count: number): AskResult<BoState> {
  const beta = state.params.beta;
  const rng = Rng.fromState(state.rng);
  const history = ctx.history;
  if (count <= 0) return { points: [], state };
  if (history.length < 2) {
    // Initial design: prior draws ν_0 = N(0, I), clipped to the box (header).
    const points = Array.from({ length: count }, () => clip(state.box, Array.from(rng.normals(state.dim))));
    return { points, state: { ...state, rng: rng.state() } };
  }
  const { X, y } = trainingData(state, history);
  const model = state.hyper && state.hyper.lengthscales.length === state.dim ? buildModel(fromRows(X), y, state.hyper) : fit(state, history);
  const bi = bestIndex(history);
  const w = beta === 0 ? 0 : beta / Math.max(1, state.generation);
  const unit = selectBatch(state, model, rng, ctx.pending, count, X[bi], y[bi], w);
  const points = unit.map((x) => clip(state.box, fromUnit(state.box, x)));
  return { points, state: { ...state, rng: rng.state(), hyper: plainHyper(model.hyper) } };
}

export function tellBo(state: BoState, ctx: TellContext): BoState {
  const history = ctx.history;
  const next: BoState = { ...state, generation: state.generation + 1 };
  if (history.length === 0) return next;
  next.mean = [...history[bestIndex(history)].x];
  if (history.length < 2) return next;
  const model = fit(state, history);
  next.hyper = plainHyper(model.hyper);
  next.recommended = recommendation(model, history);
  next.diagnostics = { integral_mean: null, integral_std: null, n_active: history.length };
  return next;
}

/**
 * The evaluated configuration with the lowest posterior mean under `model` (fitted on `history` in
 * order, standardised y), and the prediction there in y units; the first on ties.
 */
export function recommendation(model: GpModel, history: Observation[]): BoRecommendation {
  const { yMean, yStd } = standardise(history.map((o) => o.y));
  const p = predict(model, model.X);
  let b = 0;
  for (let i = 1; i < history.length; i++) if (p.mean[i] < p.mean[b]) b = i;
  return { x: [...history[b].x], predicted: yMean + yStd * p.mean[b], predicted_std: yStd * Math.sqrt(p.variance[b]) };
}

/**
 * /best's estimate: the stored recommendation, when it is a finite point of the state's dimension
 * whose choice indices (on a mixed space) name existing choices. An imported state may hold
 * anything there; a malformed one is ignored (no prediction, the distribution's centre is named).
 */
export function estimateBo(state: BoState): Estimate {
  const r = state.recommended;
  const none: Estimate = { predicted: null, predicted_std: null };
  if (!r || typeof r !== 'object' || !Array.isArray(r.x) || r.x.length !== state.dim || !r.x.every(Number.isFinite)) return none;
  if (!Number.isFinite(r.predicted) || !Number.isFinite(r.predicted_std) || r.predicted_std < 0) return none;
  const q = state.categorical ?? [];
  const dc = state.dim - q.length;
  if (!q.every((p, j) => Number.isInteger(r.x[dc + j]) && r.x[dc + j] >= 0 && r.x[dc + j] < p.length)) return none;
  return { predicted: r.predicted, predicted_std: r.predicted_std, point: [...r.x] };
}
