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
 * Decisions where ALGORITHM.md leaves a choice:
 * - Initial design (generation 0, no GP yet): q draws from the prior ν_0; with include_mean
 *   (default profile) μ_0 replaces the first draw, since the prior mean is the user's best guess.
 * - diagnostics.integral_mean / integral_std: posterior mean and std of E_ν[y] under the NEW ν
 *   (the state's mean/cov), in user y units: E[y] = yMean − yStd·E[−ỹ], std = yStd·√V.
 * - estimate(): latent GP posterior at μ in y units (no observation noise).
 * - The state stores the GP inputs U_A and targets −ỹ (plain JSON), so ask/estimate need no history.
 */
import { InvalidInputError } from '../errors.js';
import { cholesky, fromRows, solveLower } from '../linalg/index.js';
import { Rng } from '../random/index.js';
import type { GpHyper } from '../gp/types.js';
import {
  type BasisKind,
  type QuadraticMean,
  expectedGradientRows,
  fitModel,
  quadraticFloor,
  integralMoments,
  predictAt,
  rebuildModel,
  sampledGradientRows,
  selectBatch,
  sampleFrom,
  type PoolSelection,
} from './probnes-bq.js';
import { activeSet, standardise } from './probnes-data.js';
import { type CovForm, updateCov, updateMean } from './probnes-updates.js';
import type { AskContext, AskResult, BaseState, Estimate, InitSpec, Observation, StrategyDescriptor, TellContext } from './types.js';
import type { MethodName } from './methods.js';
import { PROBNES_OPTIONS, probnesDefaults, type OptionSpecs, type Options } from './options.js';
import { type Bounds, type MeanStep, type Stepper, limitCovGradient, limitCovToBounds, meanStep, stepInBounds } from './probnes-step.js';
import { modelOptimumPoint } from './probnes-optimum.js';
import { chooseBasis } from '../gp/basis.js';
import { fitModel as fitSurrogate, gradientAndHessian, maxModelSize, modelKind } from '../surrogate/quadratic.js';

export const PROBNES_STATE_VERSION = 1;

/** The GP of the last tell: what ask selects with and estimate predicts with. */
export interface StoredGp {
  hyper: GpHyper;
  /** U_A: the active inputs the GP was fitted on (internal coordinates). */
  X: number[][];
  /** −ỹ on the active set (states written before this name was chosen call it `z`: see `storedTargets`). */
  negYTilde: number[];
  /**
   * The basis part of the GP mean as a quadratic in u (option mean_function = quadratic; absent or
   * null: the constant-mean GP). The GP itself is then fitted to −ỹ − quad(X).
   */
  quad?: QuadraticMean | null;
  basis?: BasisKind;
  /** Indices of the active points into the history of that tell. */
  activeIdx: number[];
  /** Standardisation over the active set: y = yMean + yStd·ỹ. */
  yMean: number;
  yStd: number;
  /** MAP objective of the kept fit, and why the prior modes were used if every start failed (§2). */
  objective: number;
  fallbackReason: string | null;
}

export interface ProbnesState extends BaseState {
  /** μ has been handed out in the current generation (ALGORITHM.md §5: once per generation). */
  meanAsked: boolean;
  gp: StoredGp | null;
  /** ‖Σ g_μ‖ and ‖Σ G Σ‖_F of the last update (diagnosis of stalled gradients). */
  lastStep: { mean: number; cov: number } | null;
  /**
   * The study's bounds in internal coordinates (InitSpec.box; null for an unbounded coordinate, so
   * the state stays plain JSON), which bound μ with option mean_in_bounds. Absent: no bounds known.
   */
  bounds?: Bounds | null;
  /**
   * With optimum_radius_max > optimum_radius (ALGORITHM-default.md §K): the current trust radius ρ_t of
   * the model's optimum. Absent (states written before it, or no adaptation): optimum_radius.
   */
  optimumRadius?: number;
  /** The model's optimum handed out in this generation and the best y observed before it (null: none). */
  optimumAsked?: { x: number[]; bestBefore: number } | null;
}

function opt<T extends number | string | boolean>(state: BaseState, key: string): T {
  const v = state.options[key];
  if (v === undefined) throw new InvalidInputError(`ProbNES option ${key} is missing`);
  return v as T;
}

/** An option added after studies were first stored: a state without it keeps the behaviour it had. */
function optOr<T extends number | string | boolean>(state: BaseState, key: string, before: T): T {
  const v = state.options[key];
  return v === undefined ? before : (v as T);
}

function covFormOf(method: MethodName, state: BaseState): CovForm {
  if (method === 'prob-cmaes') return 'cmaes';
  if (method === 'prob-xnes') return 'xnes';
  return opt<string>(state, 'snes_form') === 'reference' ? 'snes-reference' : 'snes-natural';
}

function init(method: MethodName, spec: InitSpec, rng: Rng): ProbnesState {
  const d = spec.dim;
  if (!(Number.isInteger(d) && d >= 1)) throw new InvalidInputError(`dimension must be a positive integer, got ${d}`);
  if (!(Number.isInteger(spec.batchSize) && spec.batchSize >= 1)) throw new InvalidInputError('batch size must be ≥ 1');
  return {
    version: PROBNES_STATE_VERSION,
    method,
    dim: d,
    batchSize: spec.batchSize,
    generation: 0,
    rng: rng.state(),
    options: { ...spec.options },
    // The prior is N(0, I) in the whitened internal coordinates (ALGORITHM.md §0).
    mean: new Array(d).fill(0),
    cov: Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0))),
    diagnostics: { integral_mean: null, integral_std: null, n_active: null },
    meanAsked: false,
    gp: null,
    lastStep: null,
    bounds: spec.box ? { lower: spec.box.lower.map(finiteOrNull), upper: spec.box.upper.map(finiteOrNull) } : null,
  };
}

/**
 * Whether this request hands out μ (default profile, ALGORITHM.md §5): once per generation; with
 * q = 1 only on even generations (μ every other generation). Generation 0 (the initial design)
 * counts too: the prior mean is the user's best guess, so it is one of the first q points.
 */
function wantsMean(state: ProbnesState): boolean {
  if (!opt<boolean>(state, 'include_mean') || state.meanAsked) return false;
  return state.batchSize > 1 || state.generation % 2 === 0;
}

function ask(state: ProbnesState, ctx: AskContext, count: number): AskResult<ProbnesState> {
  if (!(Number.isInteger(count) && count >= 0)) throw new InvalidInputError(`count must be a non-negative integer, got ${count}`);
  const rng = Rng.fromState(state.rng);
  const includeMean = count > 0 && wantsMean(state);
  const points: number[][] = includeMean ? [state.mean.slice()] : [];
  // Default profile (ALGORITHM-default.md §K): the quadratic model's trust-region optimum as one point,
  // when the batch keeps at least one point for the BQ selection.
  const optimum = count - points.length >= 2 ? injectedOptimum(state, ctx.history, points) : null;
  if (optimum) points.push(optimum);
  const asked = optimum && adaptsRadius(state) ? { optimumAsked: { x: optimum.slice(), bestBefore: ctx.history.reduce((m, o) => Math.min(m, o.y), Infinity) } } : {};
  const nSelect = count - points.length;
  if (nSelect > 0) {
    const useBq = opt<string>(state, 'acquisition') === 'batch-bq' && state.gp !== null;
    if (useBq) {
      // Pending points join U_A (no y needed); μ counts as pending when it is in this batch.
      const pending = [...ctx.pending.map((p) => p.slice()), ...points];
      const model = rebuildModel(state.gp!.hyper, state.gp!.X, storedTargets(state.gp!));
      points.push(...selectBatch(model, state.mean, state.cov, pending, nSelect, opt<number>(state, 'candidates'), rng, {
        size: optOr(state, 'candidate_pool', 0),
        selection: optOr<PoolSelection>(state, 'pool_selection', 'greedy'),
      }));
    } else {
      // acquisition "none", or the initial design before any GP exists: i.i.d. draws from ν.
      points.push(...sampleFrom(state.mean, state.cov, nSelect, rng));
    }
  }
  return { points, state: { ...state, ...asked, rng: rng.state(), meanAsked: state.meanAsked || includeMean } };
}

/**
 * The model's optimum for this batch (option inject_optimum), or null: no quadratic basis yet, or the
 * point lies within 0.1 standard deviations of ν (Mahalanobis) of a point already in the batch (μ,
 * once the model's optimum is μ itself: an evaluation would repeat it).
 */
function injectedOptimum(state: ProbnesState, history: readonly Observation[], batch: number[][]): number[] | null {
  const kind = optOr<string>(state, 'inject_optimum', 'off');
  const g = state.gp;
  if (kind === 'off' || !g) return null;
  // Gate (option optimum_gate): 'basis' needs the GP mean itself to be diagonal or full quadratic;
  // 'count' only that the active set (g.X) has enough points for such a basis by the count rule of
  // §A, so a generation whose GP mean leave-one-out kept constant (§L) still gets the point.
  const gate = optOr<string>(state, 'optimum_gate', 'basis');
  const allowed = gate === 'count' ? chooseBasis(g.X.length, state.dim) : g.quad ? g.basis : 'constant';
  if (!(allowed === 'diagonal' || allowed === 'full')) return null;
  if (kind === 'basis' && !g.quad) return null;
  const quad = kind === 'weighted' ? weightedQuadratic(history, state.dim, state.batchSize) : g.quad;
  if (!quad) return null;
  const u = modelOptimumPoint(quad, state.mean, state.cov, currentOptimumRadius(state), optOr(state, 'mean_in_bounds', false) ? (state.bounds ?? null) : null);
  if (!u.every(Number.isFinite)) return null;
  const L = cholesky(fromRows(state.cov)).L;
  for (const p of batch) {
    const z = solveLower(L, Float64Array.from(u, (v, i) => v - p[i]));
    if (Math.hypot(...z) < 0.1) return null;
  }
  return u;
}

function adaptsRadius(state: BaseState): boolean {
  return optOr<number>(state, 'optimum_radius_max', 0) > opt<number>(state, 'optimum_radius');
}

/** ρ_t: the trust radius of the model's optimum this generation (§K). */
export function currentOptimumRadius(state: ProbnesState): number {
  const rho0 = opt<number>(state, 'optimum_radius');
  return adaptsRadius(state) ? (state.optimumRadius ?? rho0) : rho0;
}

/**
 * The trust-radius update of §K (classic trust-region management, Nocedal & Wright 2006, Algorithm 4.1):
 * ρ doubles, up to ρ_max, after a generation whose model optimum was better than every value observed
 * before it was asked; it halves back toward ρ₀ (never below) after one whose optimum was not. A
 * generation without the model's optimum (or whose optimum was not observed) leaves ρ as it is.
 */
export function updateOptimumRadius(rho: number, rho0: number, rhoMax: number, improved: boolean | null): number {
  if (improved === null) return rho;
  return improved ? Math.min(2 * rho, rhoMax) : Math.max(rho / 2, rho0);
}

function radiusAfterTell(state: ProbnesState, batch: readonly Observation[]): Pick<ProbnesState, 'optimumRadius' | 'optimumAsked'> {
  if (!adaptsRadius(state)) return {};
  const asked = state.optimumAsked ?? null;
  const obs = asked ? batch.find((o) => o.x.length === asked.x.length && o.x.every((v, i) => Math.abs(v - asked.x[i]) <= 1e-9 * (1 + Math.abs(v)))) : undefined;
  const improved = asked && obs ? obs.y < asked.bestBefore : null;
  const rho = updateOptimumRadius(currentOptimumRadius(state), opt<number>(state, 'optimum_radius'), opt<number>(state, 'optimum_radius_max'), improved);
  return { optimumRadius: rho, optimumAsked: null };
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
  const model = fitSurrogate(recent, d);
  const { c, b, H } = gradientAndHessian(model, d);
  return { centre: model.xBest, a0: -c, b: b.map((v) => -v), A: H.map((row) => row.map((v) => -v)) };
}

function checkHistory(history: readonly Observation[], d: number): void {
  for (const o of history) {
    if (o.x.length !== d) throw new InvalidInputError(`observation has dimension ${o.x.length}, expected ${d}`);
    if (!Number.isFinite(o.y) || !o.x.every(Number.isFinite)) throw new InvalidInputError('observation has a non-finite value');
  }
}

function frobenius(m: number[][]): number {
  return Math.sqrt(m.reduce((s, row) => s + row.reduce((t, v) => t + v * v, 0), 0));
}

function tell(method: MethodName, state: ProbnesState, ctx: TellContext): ProbnesState {
  const history = ctx.history;
  checkHistory(history, state.dim);
  const next: ProbnesState = { ...state, generation: state.generation + 1, meanAsked: false, ...radiusAfterTell(state, ctx.batch) };
  if (history.length === 0) return next; // nothing observed: keep ν (an empty generation)
  const rng = Rng.fromState(state.rng);
  // §1 step 1–2: active set against the CURRENT ν, standardise over it, flip the sign (maximise).
  const idx = activeSet(history, state.mean, state.cov, {
    enabled: opt<boolean>(state, 'active_set'),
    quantile: opt<number>(state, 'active_set_quantile'),
    // The default profile's floor: enough points for the full quadratic basis (n ≥ 1.5·p), topped
    // up with the nearest points, so the quadratic is used even after Σ has shrunk past the data.
    minSize: optOr(state, 'active_set_floor', false) ? Math.max(state.batchSize, quadraticFloor(state.dim)) : state.batchSize,
    maxSize: optOr(state, 'active_set_cap', 0),
  });
  const X = idx.map((j) => history[j].x.slice());
  const st = standardise(idx.map((j) => history[j].y));
  const negYTilde = st.yTilde.map((v) => -v);
  // §1 step 3 / §2: MAP fit; the default profile adds a warm start from the previous MAP.
  const warm = opt<boolean>(state, 'gp_warm_start') && state.gp ? state.gp.hyper : null;
  // With a warm start, the default start runs in every k-th generation only (option absent in older states: every one).
  const every = optOr(state, 'gp_cold_start_every', 1);
  const coldStart = !warm || (every > 0 && state.generation % every === 0);
  // The default profile's mean function: a quadratic basis whitened by the current ν (ALGORITHM-default.md §A).
  const meanSpec =
    optOr<string>(state, 'mean_function', 'constant') === 'quadratic'
      ? { kind: 'quadratic' as const, centre: state.mean, cov: state.cov, selection: optOr<'count' | 'loo' | 'loo-constant' | 'loo-gated'>(state, 'mean_basis', 'count'), looSe: optOr(state, 'mean_basis_se', 0), gate: { wide: optOr(state, 'mean_basis_wide', 0.3), scale: optOr(state, 'mean_basis_scale', 1), r2: optOr(state, 'mean_basis_r2', 0.9) } }
      : undefined;
  const fit = fitModel(X, negYTilde, { warmStart: warm, coldStart, restarts: opt<number>(state, 'gp_restarts'), rng, mean: meanSpec });
  // §3: expected (closed-form) or sampled gradient of E_ν[−ỹ] in (μ, Σ).
  const grad =
    opt<string>(state, 'gradient') === 'sampled'
      ? sampledGradientRows(fit.model, state.mean, state.cov, rng, opt<number>(state, 'gradient_samples'), fit.quad)
      : expectedGradientRows(fit.model, state.mean, state.cov, fit.quad);
  // §4: natural-gradient ascent on E_ν[−ỹ]; η_Σ has its own value once the mean is quadratic.
  const quadratic = fit.basis === 'diagonal' || fit.basis === 'full';
  const etaCov = opt<number>(state, quadratic ? 'learning_rate_cov_quadratic' : 'learning_rate_cov');
  const stepKind = optOr<string>(state, 'mean_step', 'natural') as MeanStep;
  // §E's step once the mean is quadratic; once it is linear, with mean_step_linear, the step along
  // Σg_μ to the trust radius (the Cauchy point of a model without curvature, A = 0).
  const linearStep = fit.basis === 'linear' && optOr(state, 'mean_step_linear', false);
  const etaMean = opt<number>(state, 'learning_rate_mean');
  const step: Stepper =
    (quadratic && stepKind !== 'natural') || linearStep
      ? (m, c, g, A) => meanStep(linearStep ? 'cauchy' : stepKind, m, c, g, A, etaMean, opt<number>(state, 'trust_radius'))
      : (m, c, g) => updateMean(m, c, g, etaMean);
  // Default profile: μ stays inside the study's bounds (ALGORITHM-default.md §I).
  const mean =
    optOr(state, 'mean_in_bounds', false) && state.bounds
      ? stepInBounds(step, state.mean, state.cov, grad.gMean, fit.quad?.A ?? null, state.bounds, optOr(state, 'mean_step_free', false))
      : step(state.mean, state.cov, grad.gMean, fit.quad?.A ?? null);
  const gCov = quadratic ? limitCovGradient(state.cov, grad.gCov, etaCov, opt<number>(state, 'cov_step_limit')) : grad.gCov;
  const updated = updateCov(covFormOf(method, state), state.cov, gCov, etaCov);
  // Default profile: ν no wider than the box (ALGORITHM-default.md §I). Without it Σ can grow
  // without bound while every point lands on the box's faces (σ ≈ 10⁸ in a width-10 box seen on BBOB
  // f16), and the GP's data then carry no information to shrink it again.
  const cov = optOr(state, 'cov_in_bounds', false) && state.bounds ? limitCovToBounds(updated, state.bounds) : updated;
  // Diagnostics describe the state's (new) ν, in y units: E[y] = yMean − yStd·E[−ỹ], std = yStd·√V.
  const mom = integralMoments(fit.model, mean, cov, fit.quad);
  const stepMean = Math.hypot(...mean.map((m, i) => m - state.mean[i]));
  const stepCov = frobenius(cov.map((row, i) => row.map((v, j) => v - state.cov[i][j])));
  return {
    ...next,
    rng: rng.state(),
    mean,
    cov,
    diagnostics: {
      integral_mean: finiteOrNull(st.yMean - st.yStd * mom.mean),
      integral_std: finiteOrNull(st.yStd * Math.sqrt(Math.max(mom.variance, 0))),
      n_active: idx.length,
    },
    gp: {
      hyper: fit.model.hyper,
      X,
      negYTilde,
      ...(fit.quad ? { quad: fit.quad, basis: fit.basis } : {}),
      activeIdx: idx,
      yMean: st.yMean,
      yStd: st.yStd,
      objective: fit.objective,
      fallbackReason: fit.fallbackReason,
    },
    lastStep: { mean: stepMean, cov: stepCov },
  };
}

/**
 * The stored GP targets −ỹ. States written before the field was named `negYTilde` hold it as `z`
 * (the same numbers): they are read as they are, so a study survives the rename.
 */
function storedTargets(g: StoredGp): number[] {
  return g.negYTilde ?? (g as unknown as { z: number[] }).z;
}

/** GP prediction of y at μ in user y units (latent std, no observation noise). */
function estimate(state: ProbnesState): Estimate {
  if (!state.gp) return { predicted: null, predicted_std: null };
  const g = state.gp;
  const p = predictAt(rebuildModel(g.hyper, g.X, storedTargets(g), g.quad ?? null), state.mean, g.quad ?? null);
  return { predicted: finiteOrNull(g.yMean - g.yStd * p.mean), predicted_std: finiteOrNull(g.yStd * Math.sqrt(Math.max(p.variance, 0))) };
}

/**
 * A y-unit figure, or null when it overflows: with values near the top of the double range,
 * yStd·E[−ỹ] can exceed it although the model (in standardised units) is sound, and a state or an
 * answer must never hold ∞ (it would not survive JSON).
 */
function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/**
 * The descriptor of one of the three ProbNES methods. They share everything but the covariance
 * update (chosen by `method`), η_Σ's default and any options of their own (prob-snes's `snes_form`).
 */
export function makeProbnesStrategy(
  method: MethodName,
  own: { learningRateCov: number; options?: OptionSpecs; defaults?: (profile: string) => Options },
): StrategyDescriptor<ProbnesState> {
  return {
    name: method,
    options: { ...PROBNES_OPTIONS, ...own.options },
    defaults: (_d, profile) => ({ ...probnesDefaults(profile, own.learningRateCov), ...own.defaults?.(profile) }),
    minBatch: 1,
    // The box bounds μ (option mean_in_bounds); points are still projected onto the bounds.
    usesBox: true,
    stateVersion: PROBNES_STATE_VERSION,
    init: (spec, rng) => init(method, spec, rng),
    ask,
    tell: (state, ctx) => tell(method, state, ctx),
    estimate: (state) => estimate(state),
  };
}
