/**
 * The ProbNES loop shared by Prob-CMAES, Prob-XNES and Prob-SNES (ALGORITHM.md §1–§5): one
 * `tell` = active set → standardise → GP fit → BQ expected gradient → natural-gradient update;
 * one `ask` = batch-BQ selection from the new ν with the GP of the last `tell`.
 *
 * Glossary (shapes): d = dimension, q = batch size, n = |A| active points; mean μ (d), cov Σ (d×d);
 * Λ = diag(lengthscales²); U_A (n×d) the GP inputs, −ỹ (n, `negYTilde`) the GP targets. The GP
 * models −ỹ = −(y − yMean)/yStd: the strategies MINIMISE y, the paper's §3 formulas are written for a
 * maximised integrand, so the sign is flipped once here and every gradient is an ascent direction
 * on E_ν[−ỹ] (= a descent direction on E_ν[y]). Conversions back to y units happen only in
 * diagnostics and `estimate`.
 *
 * The loop reads its parameters only from `state.params` (probnes-params.ts), resolved once at init.
 *
 * Decisions where ALGORITHM.md leaves a choice:
 * - Initial design (generation 0, no GP yet): q draws from the prior ν_0; with params.includeMean
 *   (default profile) μ_0 replaces the first draw, since the prior mean is the user's best guess.
 * - diagnostics.integral_mean / integral_std: posterior mean and std of E_ν[y] under the NEW ν
 *   (the state's mean/cov), in user y units: E[y] = yMean − yStd·E[−ỹ], std = yStd·√V.
 * - estimate(): latent GP posterior at μ in y units (no observation noise), corrected by the residuals of the
 *   values observed at earlier μ (docs/ALGORITHM.md §28) once there are enough of them.
 * - The state stores the GP inputs U_A and targets −ỹ (plain JSON), so ask/estimate need no history.
 */
import { InvalidInputError } from '../errors.js';
import { correctForSurprise, type Surprise } from '../gp/calibration.js';
import { cholesky, fromRows, solveLower } from '../linalg/index.js';
import { Rng } from '../random/index.js';
import {
  type QuadraticMean,
  expectedGradientRows,
  fitProbnesGp,
  quadraticFloor,
  integralMoments,
  predictAt,
  rebuildModel,
  basisVarianceAt,
  sampledGradientRows,
} from './probnes-bq.js';
import { activeSet, packedMatches, standardise } from './probnes-data.js';
import { samePoint } from './es-utils.js';
import { updateCov, updateMean } from './probnes-updates.js';
import type { AskContext, AskResult, Estimate, InitSpec, Observation, PackedHistory, StrategyDescriptor, TellContext } from './types.js';
import type { MethodName } from './methods.js';
import { type Stepper, limitCovGradient, meanStep, stepInBounds } from './probnes-step.js';
import { limitCovToBounds, storedBounds } from './bounds.js';
import { modelOptimumPoint } from './probnes-optimum.js';
import { PROBNES_OPTIONS, RETIRED_PROBNES_OPTIONS, probnesBenchOptions, probnesDefaults, resolveProbnesParams, type ProbnesOwn, type ProbnesParams } from './probnes-params.js';
import { fitModel, gradientAndHessian, maxModelSize, modelKind } from '../surrogate/quadratic.js';
import { migrateProbnesState } from './probnes-migrate.js';
import { askProbnesMixed, estimateProbnesMixed, initProbnesMixed, tellProbnesMixed } from './probnes-mixed.js';
import { PROBNES_STATE_VERSION, SURPRISE_WINDOW, finiteOrNull, integralDiagnostics, stepSizes, type ProbnesState } from './probnes-state.js';
import { powellNext, powellObserve } from './powell-iteration.js';
import { boxOfBounds } from './bounds.js';
import { askStart, batchFromNu, initStart, startGenerationSize, tellStart } from './probnes-start.js';
import { restartAfterTell } from './probnes-restart.js';

export { PROBNES_STATE_VERSION, type ProbnesState, type StoredGp } from './probnes-state.js';

function init(method: MethodName, own: ProbnesOwn, spec: InitSpec, rng: Rng): ProbnesState {
  const d = spec.dim;
  if (!(Number.isInteger(d) && d >= 1)) throw new InvalidInputError(`dimension must be a positive integer, got ${d}`);
  if (!(Number.isInteger(spec.batchSize) && spec.batchSize >= 1)) throw new InvalidInputError('batch size must be ≥ 1');
  const params = resolveProbnesParams(method, own, spec.options, d, spec.budget ?? null);
  const start = params.startPhase === 'powell' ? initStart(d, params.startPhaseLength, params.startPhasePoints, params.startPhaseFar ?? 'bobyqa' /* params without the choice: BOBYQA's test */) : null;
  const state: ProbnesState = {
    version: PROBNES_STATE_VERSION,
    method,
    dim: d,
    batchSize: spec.batchSize,
    generation: 0,
    rng: rng.state(),
    params,
    // The prior is N(0, I) in the whitened internal coordinates (ALGORITHM.md §0).
    mean: new Array(d).fill(0),
    cov: Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0))),
    diagnostics: { integral_mean: null, integral_std: null, n_active: null },
    meanAsked: false,
    gp: null,
    lastStep: null,
    bounds: storedBounds(spec.box),
    optimumRadius: params.optimumRadius,
    optimumAsked: null,
    start,
  };
  // The start phase's first generation is its stencil (probnes-start.ts).
  return start ? { ...state, generationSize: startGenerationSize(state) } : state;
}

/**
 * Whether this request hands out μ (default profile, ALGORITHM.md §12): once per generation; with
 * q = 1 only on even generations (μ every other generation). Generation 0 (the initial design)
 * counts too: the prior mean is the user's best guess, so it is one of the first q points.
 */
function wantsMean(state: ProbnesState): boolean {
  if (!state.params.includeMean || state.meanAsked) return false;
  return state.batchSize > 1 || state.generation % 2 === 0;
}

function ask(state: ProbnesState, ctx: AskContext, count: number): AskResult<ProbnesState> {
  if (!(Number.isInteger(count) && count >= 0)) throw new InvalidInputError(`count must be a non-negative integer, got ${count}`);
  if (state.start) return askStart(state, ctx, count);
  const rng = Rng.fromState(state.rng);
  const includeMean = count > 0 && wantsMean(state);
  const points: number[][] = includeMean ? [state.mean.slice()] : [];
  // Default profile (ALGORITHM.md §24): the quadratic model's trust-region optimum as one point,
  // when the batch keeps at least one point for the BQ selection.
  const optimum = count - points.length >= 2 ? injectedOptimum(state, ctx.history, points) : null;
  if (optimum) points.push(optimum);
  let trail = state.trail ?? null;
  if (trail && count - points.length >= 1) {
    trail = structuredClone(trail);
    const x = powellNext(trail.powell, boxOfBounds(state.bounds));
    if (x) points.push(x);
  }
  const asked = optimum && adaptsRadius(state.params) ? { optimumAsked: { x: optimum.slice(), bestBefore: ctx.history.reduce((m, o) => Math.min(m, o.y), Infinity) } } : {};
  // Batch BQ (pending points join U_A, no y needed; μ counts as pending when it is in this batch), or i.i.d.
  // draws from ν with acquisition "none" and in the initial design before any GP exists.
  points.push(...batchFromNu(state, [...ctx.pending.map((x) => x.slice()), ...points], count - points.length, rng, ctx.admissible));
  return { points, state: { ...state, ...asked, ...(trail ? { trail } : {}), rng: rng.state(), meanAsked: state.meanAsked || includeMean } };
}

/** Experiment (params.startPhaseTrail): Powell's iteration told the results it has not seen. */
function trailAfterTell(state: ProbnesState, history: readonly Observation[]): Partial<ProbnesState> {
  if (!state.trail) return {};
  const trail = structuredClone(state.trail);
  for (const o of history.slice(trail.seen)) powellObserve(trail.powell, o.x, o.y);
  trail.seen = history.length;
  return { trail };
}

/**
 * The model's optimum for this batch (params.injectOptimum), or null: the GP mean is not yet diagonal
 * or full quadratic, or the point lies within 0.1 standard deviations of ν (Mahalanobis) of a point
 * already in the batch (μ, once the model's optimum is μ itself: an evaluation would repeat it).
 */
function injectedOptimum(state: ProbnesState, history: readonly Observation[], batch: number[][]): number[] | null {
  const kind = state.params.injectOptimum;
  const g = state.gp;
  if (kind === 'off' || !g) return null;
  if (!(g.basis === 'diagonal' || g.basis === 'full')) return null;
  const quad = kind === 'weighted' ? weightedQuadratic(history, state.dim, state.batchSize) : g.quad;
  if (!quad) return null;
  const u = modelOptimumPoint(quad, state.mean, state.cov, state.optimumRadius, state.params.meanInBounds ? state.bounds : null);
  if (!u.every(Number.isFinite)) return null;
  const L = cholesky(fromRows(state.cov)).L;
  for (const p of batch) {
    const z = solveLower(L, Float64Array.from(u, (v, i) => v - p[i]));
    if (Math.hypot(...z) < 0.1) return null;
  }
  return u;
}

function adaptsRadius(p: ProbnesParams): boolean {
  return p.optimumRadiusMax > p.optimumRadius;
}

/**
 * The trust-radius update of §24 (classic trust-region management, Nocedal & Wright 2006, Algorithm 4.1):
 * ρ doubles, up to ρ_max, after a generation whose model optimum was better than every value observed
 * before it was asked; it halves back toward ρ₀ (never below) after one whose optimum was not. A
 * generation without the model's optimum (or whose optimum was not observed) leaves ρ as it is.
 */
export function updateOptimumRadius(rho: number, rho0: number, rhoMax: number, improved: boolean | null): number {
  if (improved === null) return rho;
  return improved ? Math.min(2 * rho, rhoMax) : Math.max(rho / 2, rho0);
}

function radiusAfterTell(state: ProbnesState, batch: readonly Observation[]): Partial<Pick<ProbnesState, 'optimumRadius' | 'optimumAsked'>> {
  const p = state.params;
  if (!adaptsRadius(p)) return {};
  const asked = state.optimumAsked;
  const obs = asked ? batch.find((o) => samePoint(o.x, asked.x)) : undefined;
  const improved = asked && obs ? obs.y < asked.bestBefore : null;
  return { optimumRadius: updateOptimumRadius(state.optimumRadius, p.optimumRadius, p.optimumRadiusMax, improved), optimumAsked: null };
}

/**
 * lq-CMA-ES's model (surrogate/quadratic.ts: rank-weighted least squares on the best three quarters
 * of the most recent max(q, 2·p_full) points, solved by Householder QR), maximised form as the GP's basis quadratic (−f̂), or
 * null while it is linear.
 */
function weightedQuadratic(history: readonly Observation[], d: number, q: number): QuadraticMean | null {
  const recent = history.slice(-maxModelSize(d, q));
  if (recent.length === 0) return null;
  // The linear model is never used here: skip its fit. The quadratic kinds by Householder QR, with
  // the Jacobi pseudoinverse where the design is rank-deficient (surrogate/quadratic.ts).
  if (modelKind(recent.length, d) === 'linear') return null;
  const model = fitModel(recent, d);
  const { c, b, H } = gradientAndHessian(model, d);
  return { centre: model.xBest, a0: -c, b: b.map((v) => -v), A: H.map((row) => row.map((v) => -v)) };
}

/**
 * Every tell checks the whole history: plain loops (no callback per coordinate), as it grows with the
 * study; over the packed copy when the caller keeps one (its rows have d coordinates by construction).
 */
function checkHistory(history: readonly Observation[], d: number, packed: PackedHistory | undefined): void {
  if (packed && packedMatches(packed, history.length, d)) {
    const { x, y } = packed;
    for (let j = 0; j < y.length; j++) if (!Number.isFinite(y[j])) throw new InvalidInputError('observation has a non-finite value');
    for (let k = 0; k < x.length; k++) if (!Number.isFinite(x[k])) throw new InvalidInputError('observation has a non-finite value');
    return;
  }
  for (let j = 0; j < history.length; j++) {
    const o = history[j];
    const x = o.x;
    if (x.length !== d) throw new InvalidInputError(`observation has dimension ${x.length}, expected ${d}`);
    let finite = Number.isFinite(o.y);
    for (let i = 0; finite && i < d; i++) finite = Number.isFinite(x[i]);
    if (!finite) throw new InvalidInputError('observation has a non-finite value');
  }
}

function tell(method: MethodName, state: ProbnesState, ctx: TellContext): ProbnesState {
  checkHistory(ctx.history, state.dim, ctx.packed);
  // The start phase's own updates never restart (§33 watches the natural-gradient search after it).
  if (state.start) return tellStart(state, ctx, (s, c) => update(s, c, false));
  return update(state, ctx, true);
}

/** One natural-gradient update (§1–§4, §28), and with `watch` the restart of a converged search (§33). */
function update(state: ProbnesState, ctx: TellContext, watch: boolean): ProbnesState {
  const history = ctx.history;
  const next: ProbnesState = { ...state, generation: state.generation + 1, meanAsked: false, ...radiusAfterTell(state, ctx.batch), ...trailAfterTell(state, history) };
  if (history.length === 0) return next; // nothing observed: keep ν (an empty generation)
  const rng = Rng.fromState(state.rng);
  const p = state.params;
  // §1 step 1–2: active set against the CURRENT ν, standardise over it, flip the sign (maximise).
  const idx = activeSet(history, state.mean, state.cov, {
    enabled: p.activeSet,
    quantile: p.activeSetQuantile,
    // The default profile's floor: enough points for the full quadratic basis (n ≥ 1.5·p), topped
    // up with the nearest points, so the quadratic is used even after Σ has shrunk past the data.
    minSize: p.activeSetFloor ? Math.max(state.batchSize, quadraticFloor(state.dim)) : state.batchSize,
    maxSize: p.activeSetCap,
  }, ctx.packed);
  const X = idx.map((j) => history[j].x.slice());
  const st = standardise(idx.map((j) => history[j].y));
  const negYTilde = st.yTilde.map((v) => -v);
  // §1 step 3 / §2: MAP fit; the default profile adds a warm start from the previous MAP.
  const warm = p.gpWarmStart && state.gp ? state.gp.hyper : null;
  // With a warm start, the default start runs in every k-th generation only.
  const every = p.gpColdStartEvery;
  const coldStart = !warm || (every > 0 && state.generation % every === 0);
  // The default profile's mean function: a quadratic basis whitened by the current ν (ALGORITHM.md §14).
  const meanSpec = p.meanFunction === 'quadratic' ? { centre: state.mean, cov: state.cov } : null;
  // Reported standard errors (docs/ALGORITHM.md §28): known noise variances in the standardised units.
  const knownNoise = reportedNoise(idx.map((j) => history[j].stderr), st.yStd);
  const fit = fitProbnesGp(X, negYTilde, { warmStart: warm, coldStart, restarts: p.gpRestarts, rng, quadratic: meanSpec, knownNoise });
  // §3: expected (closed-form) or sampled gradient of E_ν[−ỹ] in (μ, Σ).
  const grad =
    p.gradient === 'sampled'
      ? sampledGradientRows(fit.model, state.mean, state.cov, rng, p.gradientSamples, fit.quad)
      : expectedGradientRows(fit.model, state.mean, state.cov, fit.quad);
  // §4: natural-gradient ascent on E_ν[−ỹ]; η_Σ has its own value once the mean is quadratic.
  const quadratic = fit.basis === 'diagonal' || fit.basis === 'full';
  const etaCov = quadratic ? p.etaCovQuadratic : p.etaCov;
  // §18's step once the mean is quadratic; once it is linear, with meanStepLinear, the step along
  // Σg_μ to the trust radius (the Cauchy point of a model without curvature, A = 0).
  const linearStep = fit.basis === 'linear' && p.meanStepLinear;
  const step: Stepper =
    (quadratic && p.meanStep !== 'natural') || linearStep
      ? (m, c, g, A) => meanStep(linearStep ? 'cauchy' : p.meanStep, m, c, g, A, p.etaMean, p.trustRadius)
      : (m, c, g) => updateMean(m, c, g, p.etaMean);
  // Default profile: μ stays inside the study's bounds (ALGORITHM.md §22).
  const mean =
    p.meanInBounds && state.bounds
      ? stepInBounds(step, state.mean, state.cov, grad.gMean, fit.quad?.A ?? null, state.bounds, p.meanStepFree)
      : step(state.mean, state.cov, grad.gMean, fit.quad?.A ?? null);
  const gCov = quadratic ? limitCovGradient(state.cov, grad.gCov, etaCov, p.covStepLimit) : grad.gCov;
  const updated = updateCov(p.covForm, state.cov, gCov, etaCov);
  // Default profile: ν no wider than the box (ALGORITHM.md §22). Without it Σ can grow
  // without bound while every point lands on the box's faces (σ ≈ 10⁸ in a width-10 box seen on BBOB
  // f16), and the GP's data then carry no information to shrink it again.
  const cov = p.covInBounds && state.bounds ? limitCovToBounds(updated, state.bounds) : updated;
  // Diagnostics describe the state's (new) ν, in y units: E[y] = yMean − yStd·E[−ỹ], std = yStd·√V.
  const mom = integralMoments(fit.model, mean, cov, fit.quad);
  const told: ProbnesState = {
    ...next,
    rng: rng.state(),
    mean,
    cov,
    diagnostics: integralDiagnostics(st, mom, idx.length),
    gp: {
      hyper: fit.model.hyper,
      X,
      negYTilde,
      quad: fit.quad,
      basis: fit.basis,
      ...(knownNoise ? { knownNoise } : {}),
      activeIdx: idx,
      yMean: st.yMean,
      yStd: st.yStd,
      objective: fit.objective,
      fallbackReason: fit.fallbackReason,
    },
    lastStep: stepSizes(state, mean, cov),
  };
  const after = watch ? restartAfterTell(told, ctx.batch, history) : told;
  if (!p.includeMean) return after;
  // §28: μ is evaluated in the next generation; the prediction there, made now, is scored when its value comes.
  return { ...after, surprises: surprisesAfter(state, ctx.batch), prediction: predictionAt(after) };
}

/** The residuals after this generation's batch: the value observed at the predicted μ, if it is in the batch. */
function surprisesAfter(state: ProbnesState, batch: readonly Observation[]): Surprise[] {
  const kept = state.surprises ?? [];
  const pr = state.prediction;
  // μ comes back as handed out (the domain tells the stored point), up to rounding.
  const o = pr ? batch.find((b) => samePoint(b.x, pr.x)) : undefined;
  if (!pr || !o || !Number.isFinite(o.y - pr.predicted)) return kept;
  const stderr = typeof o.stderr === 'number' && o.stderr > 0 && Number.isFinite(o.stderr) ? o.stderr : 0;
  return [...kept, { r: o.y - pr.predicted, sd: pr.sd, noise: Math.hypot(pr.noise, stderr) }].slice(-SURPRISE_WINDOW);
}

/** The model's uncorrected prediction at μ (y units), or null without a GP or when it overflows. */
function predictionAt(state: ProbnesState): ProbnesState['prediction'] {
  const raw = rawPrediction(state);
  if (!raw || ![raw.predicted, raw.sd, raw.noise].every(Number.isFinite)) return null;
  return { x: state.mean.slice(), ...raw };
}

/** GP prediction of y at μ in user y units: the latent mean, its standard deviation, and the noise's (σ_n). */
function rawPrediction(state: ProbnesState): { predicted: number; sd: number; noise: number } | null {
  if (!state.gp) return null;
  const g = state.gp;
  const model = rebuildModel(g.hyper, g.X, g.negYTilde, g.quad, g.knownNoise ?? null);
  const p = predictAt(model, state.mean, g.quad);
  // §28: with a basis mean the coefficients' uncertainty is part of the prediction's (R&W eq. 2.42).
  const variance = Math.max(p.variance, 0) + (g.quad ? Math.max(basisVarianceAt(model, g.basis, g.quad.centre, g.X, state.cov, state.mean), 0) : 0);
  return { predicted: g.yMean - g.yStd * p.mean, sd: g.yStd * Math.sqrt(variance), noise: g.yStd * Math.sqrt(g.hyper.noise) };
}

/**
 * GP prediction of y at μ in user y units (latent std, no observation noise), corrected for the optimism
 * of a chosen point by the residuals of the values observed at earlier μ (§28; uncorrected without them).
 */
function estimate(state: ProbnesState): Estimate {
  // After a restart (§33), the centre the search had converged to, until the restarted search finds better.
  const home = state.stall?.home ?? null;
  const raw = rawPrediction(home ? { ...state, mean: home } : state);
  if (!raw) return { predicted: null, predicted_std: null };
  const c = correctForSurprise(raw.predicted, raw.sd, state.surprises ?? []);
  return { predicted: finiteOrNull(c.predicted), predicted_std: finiteOrNull(c.sd), ...(home ? { point: home.slice() } : {}) };
}

/**
 * The active points' reported standard errors as known noise variances of the standardised targets,
 * (stderr/yStd)², or null when none reported one (the GP is then exactly the one without reported noise).
 * A missing, null, negative or non-finite stderr counts as none (0).
 */
function reportedNoise(stderrs: readonly (number | null | undefined)[], yStd: number): number[] | null {
  if (!stderrs.some((s) => typeof s === 'number' && s > 0 && Number.isFinite(s))) return null;
  return stderrs.map((s) => (typeof s === 'number' && s > 0 && Number.isFinite(s) ? (s / yStd) ** 2 : 0));
}

/**
 * The descriptor of one of the three ProbNES methods. They share everything but the covariance
 * update (chosen by `method`), η_Σ's default and ρ₀ (probnes-params.ts ProbnesOwn).
 */
export function makeProbnesStrategy(method: MethodName, own: ProbnesOwn): StrategyDescriptor<ProbnesState> {
  return {
    name: method,
    options: PROBNES_OPTIONS,
    benchOptions: probnesBenchOptions(method),
    retiredOptions: RETIRED_PROBNES_OPTIONS,
    defaults: (_d, profile) => probnesDefaults(profile, own),
    minBatch: 1,
    // The box bounds μ (params.meanInBounds); points are still projected onto the bounds.
    usesBox: true,
    // Categorical parameters: the mixed search distribution of probnes-mixed.ts (ALGORITHM.md §27);
    // a state without `categorical` takes the paths below, unchanged.
    categorical: true,
    stateVersion: PROBNES_STATE_VERSION,
    migrate: (stored) => migrateProbnesState(method, own, stored),
    init: (spec, rng) => (spec.categories?.length ? initProbnesMixed(method, own, spec, rng) : init(method, own, spec, rng)),
    ask: (state, ctx, count) => (state.categorical ? askProbnesMixed(state, ctx, count) : ask(state, ctx, count)),
    tell: (state, ctx) => (state.categorical ? tellProbnesMixed(state, ctx) : tell(method, state, ctx)),
    estimate: (state) => (state.categorical ? estimateProbnesMixed(state) : estimate(state)),
  };
}
