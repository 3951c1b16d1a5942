/**
 * The ProbNES state (the three methods share it): plain JSON, with the typed parameters resolved at
 * init. Glossary: see probnes-core.ts.
 */
import { InvalidInputError } from '../errors.js';
import type { GpHyper } from '../gp/types.js';
import type { Surprise } from '../gp/calibration.js';
import type { BasisKind, QuadraticMean } from './probnes-bq.js';
import type { ProbnesParams } from './probnes-params.js';
import type { Bounds } from './bounds.js';
import type { PowellState } from './powell-iteration.js';
import type { BaseState, Diagnostics, Observation } from './types.js';

/**
 * Version 3: the start phase (`start`, §29; params.startPhase and startPhaseLength). Version 2: the typed
 * parameters (`params`) instead of the options, and every field present (the GP's `negYTilde`, `quad`,
 * `basis`; `bounds`, `optimumRadius`, `optimumAsked`). probnes-migrate.ts reads versions 1 and 2.
 */
export const PROBNES_STATE_VERSION = 3;

/**
 * The start phase in progress (docs/ALGORITHM.md §29; probnes-start.ts): Powell's iteration on the
 * results so far, in internal coordinates (the prior is N(0, I), so Δ is in prior standard deviations).
 */
export interface StartState {
  powell: PowellState;
  /** How many entries of the tells' history (every result, in completion order) the model has taken in. */
  seen: number;
  /** Results of the phase the natural-gradient update has not been told yet (it is told q at a time). */
  untold: Observation[];
  /** Stencil points handed out so far (generation 0), and whether the model's point was handed out in this generation. */
  stencilAsked: number;
  modelAsked: boolean;
}

/** ProbnesState.stall (§33, probnes-restart.ts): the best value since the natural-gradient search began, the history length when it last improved, the restarts made, the centre before the last one. */
export interface StallState {
  best: number;
  since: number;
  restarts: number;
  home: number[] | null;
}

/** The GP of the last tell: what ask selects with and estimate predicts with. */
export interface StoredGp {
  hyper: GpHyper;
  /** U_A: the active inputs the GP was fitted on (internal coordinates). */
  X: number[][];
  /** −ỹ on the active set. */
  negYTilde: number[];
  /**
   * The basis part of the GP mean as a quadratic in u (params.meanFunction quadratic; null: the
   * constant-mean GP). The GP itself is then fitted to −ỹ − quad(X).
   */
  quad: QuadraticMean | null;
  /** The basis of the mean ('constant' exactly when quad is null). */
  basis: BasisKind;
  /** Indices of the active points into the history of that tell. */
  activeIdx: number[];
  /** Standardisation over the active set: y = yMean + yStd·ỹ. */
  yMean: number;
  yStd: number;
  /**
   * Known noise variances of the active points, standardised (reported stderr²/yStd², ALGORITHM.md §28);
   * absent when no active point reported one (and in states stored before it existed).
   */
  knownNoise?: number[];
  /** MAP objective of the kept fit, and why the prior modes were used if every start failed (§2). */
  objective: number;
  fallbackReason: string | null;
}

export interface ProbnesState extends BaseState {
  /** Resolved once at init (probnes-params.ts); never changes. */
  params: ProbnesParams;
  /** μ has been handed out in the current generation (ALGORITHM.md §12: once per generation). */
  meanAsked: boolean;
  gp: StoredGp | null;
  /** ‖Σ g_μ‖ and ‖Σ G Σ‖_F of the last update (diagnosis of stalled gradients). */
  lastStep: { mean: number; cov: number } | null;
  /**
   * The study's bounds in internal coordinates (InitSpec.box; null for an unbounded coordinate, so
   * the state stays plain JSON), which bound μ with params.meanInBounds. null: no bounds known.
   */
  bounds: Bounds | null;
  /**
   * ρ_t, the current trust radius of the model's optimum (ALGORITHM.md §24): params.optimumRadius
   * unless params.optimumRadiusMax > params.optimumRadius, when it adapts.
   */
  optimumRadius: number;
  /** With an adapting ρ_t: the model's optimum handed out in this generation and the best y observed before it (null: none). */
  optimumAsked: { x: number[]; bestBefore: number } | null;
  /** The start phase while it runs (§29); null once it has handed over, or when params.startPhase is off. */
  start: StartState | null;
  /** Experiment (params.startPhaseTrail): Powell's iteration after the hand-over and the history length it has seen. */
  trail?: { powell: StartState['powell']; seen: number } | null;
  /**
   * With params.includeMean (μ is evaluated in the next generation, §12): the model's uncorrected prediction
   * at the μ of the last natural-gradient tell (y units: value, latent sd, the noise's sd), and the residuals
   * of the values since observed at such a μ against it, the last SURPRISE_WINDOW of them (probnes-core.ts),
   * which correct `estimate` for the optimism of a chosen point (docs/ALGORITHM.md §28). Absent without
   * includeMean, and in states stored before them (the estimate is then uncorrected).
   */
  prediction?: { x: number[]; predicted: number; sd: number; noise: number } | null;
  surprises?: Surprise[];
  /**
   * With params.restart (§33, probnes-restart.ts): the best value, when it last improved, the restarts made and
   * the centre before the last one. Absent before the natural-gradient search's first update, and in states without it.
   */
  stall?: StallState;
}


/**
 * Residuals kept for the estimate's correction (docs/ALGORITHM.md §28): the last 5 values observed at μ.
 * The optimism changes as the search settles (it is larger while μ still moves far each generation), so
 * the recent residuals describe the final μ better than all of them: on the 4-D noisy problems of
 * bench/noisy-estimate.ts (seeds 1–10) all of them gave a median z of +0.12 and +0.27 (1% and 10% noise),
 * the last 10 +0.04 and −0.04; on f101–f106 at d = 5 and 20·d the 95% interval covered 25 of 30 runs with
 * the last 10 (every optimism overestimated on Rosenbrock, f104–f106, whose μ had settled), 27 with the
 * last 5, 29 with the last 3, which on the 4-D problems was as good as 5 with a wider interval.
 */
export const SURPRISE_WINDOW = 5;

/**
 * The estimate's residual fields of a stored state are what this engine writes (an imported document may hold
 * anything): absent, or a prediction at a d-point with finite figures and at most SURPRISE_WINDOW finite
 * residuals. Throws InvalidInputError otherwise.
 */
export function checkEstimateResiduals(state: ProbnesState): void {
  const fin = (v: unknown, min = -Infinity): boolean => typeof v === 'number' && Number.isFinite(v) && v >= min;
  const pr = state.prediction as unknown;
  if (pr !== undefined && pr !== null) {
    const p = pr as NonNullable<ProbnesState['prediction']>;
    if (!(Array.isArray(p.x) && p.x.length === state.dim && p.x.every((v) => fin(v)) && fin(p.predicted) && fin(p.sd, 0) && fin(p.noise, 0))) {
      throw new InvalidInputError('the stored ProbNES prediction at μ must be a point of d finite coordinates with a finite value, sd and noise');
    }
  }
  const rs = state.surprises as unknown;
  if (rs !== undefined && !(Array.isArray(rs) && rs.length <= SURPRISE_WINDOW && rs.every((r: Surprise) => r && fin(r.r) && fin(r.sd, 0) && fin(r.noise, 0)))) {
    throw new InvalidInputError(`the stored ProbNES residuals at μ must be at most ${SURPRISE_WINDOW} finite (r, sd, noise)`);
  }
}

/**
 * A y-unit figure, or null when it overflows: with values near the top of the double range,
 * yStd·E[−ỹ] can exceed it although the model (in standardised units) is sound, and a state or an
 * answer must never hold ∞ (it would not survive JSON).
 */
export function finiteOrNull(v: number): number | null {
  return Number.isFinite(v) ? v : null;
}

/**
 * The diagnostics of a tell: the posterior moments `mom` of E_ν[−ỹ] under the new ν turned into y units,
 * E[y] = yMean − yStd·E[−ỹ] and std = yStd·√V, and the size of the active set.
 */
export function integralDiagnostics(st: { yMean: number; yStd: number }, mom: { mean: number; variance: number }, nActive: number): Diagnostics {
  return {
    integral_mean: finiteOrNull(st.yMean - st.yStd * mom.mean),
    integral_std: finiteOrNull(st.yStd * Math.sqrt(Math.max(mom.variance, 0))),
    n_active: nActive,
  };
}

/** ProbnesState.lastStep of an update from (state.mean, state.cov) to (mean, cov): ‖Δμ‖ and ‖ΔΣ‖_F. */
export function stepSizes(state: { mean: number[]; cov: number[][] }, mean: number[], cov: number[][]): { mean: number; cov: number } {
  return {
    mean: Math.hypot(...mean.map((m, i) => m - state.mean[i]!)),
    cov: Math.sqrt(cov.reduce((a, row, i) => a + row.reduce((b, v, j) => b + (v - state.cov[i]![j]!) * (v - state.cov[i]![j]!), 0), 0)),
  };
}
