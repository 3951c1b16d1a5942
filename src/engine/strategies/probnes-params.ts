/**
 * The parameters of the three ProbNES methods, resolved once at `init` from the options into a typed,
 * frozen `ProbnesParams` kept in the state (as pycma keeps CMAESParameters apart from its state, and
 * evosax Params apart from State). probnes-core.ts reads only these fields, never an option by name.
 *
 * Options come in two kinds:
 * - public: what a user should turn, accepted by the API (PROBNES_OPTIONS): the profile, the step
 *   sizes, and the cost knobs (candidate batches, active-set cap, GP restarts);
 * - bench: switches that exist for the ablations of docs/BENCHMARKS.md (PROBNES_BENCH_OPTIONS). The
 *   API refuses them; benchmark and test code, which call the strategy directly, pass them in
 *   InitSpec.options next to the public ones (bench/lib/run.ts).
 * Every parameter's default depends on the profile (ALGORITHM.md §10; the default profile's
 * additions are docs/ALGORITHM.md §11–§24).
 *
 * Adding a parameter: a field of ProbnesParams, one row of PARAMS (its option name, spec, kind and
 * default per profile), then read `params.<field>` in the engine. States already stored lack the
 * field: bump PROBNES_STATE_VERSION and give the migration (probnes-migrate.ts) the value that keeps
 * the behaviour those states had.
 */
import { InvalidInputError } from '../errors.js';
import type { MethodName } from './methods.js';
import { checkedOptions, etaCov, etaMean, type OptionSpec, type OptionSpecs, type Options, type OptionValue } from './options.js';
import type { PoolSelection } from './probnes-bq.js';
import type { MeanStep } from './probnes-step.js';
import type { CovForm } from './probnes-updates.js';

export type Profile = 'default' | 'paper';

export interface ProbnesParams {
  readonly profile: Profile;
  /** §4: η_μ; η_Σ; η_Σ in generations whose GP mean has quadratic terms (§17). */
  readonly etaMean: number;
  readonly etaCov: number;
  readonly etaCovQuadratic: number;
  /** §4: the covariance update (the method, and prob-snes's form). */
  readonly covForm: CovForm;
  /** §3: the closed-form expected gradient, or one sampled at `gradientSamples` draws (ablation). */
  readonly gradient: 'expected' | 'sampled';
  readonly gradientSamples: number;
  /** §5: batch BQ over `candidates` batches (from a pool of `candidatePool` points when > 0, §20), or plain draws. */
  readonly acquisition: 'batch-bq' | 'none';
  readonly candidates: number;
  readonly candidatePool: number;
  readonly poolSelection: PoolSelection;
  /** §5: μ is one point of every batch. */
  readonly includeMean: boolean;
  /** §1: the active set (χ² quantile; cap §21, 0 = none; floor §16). */
  readonly activeSet: boolean;
  readonly activeSetQuantile: number;
  readonly activeSetCap: number;
  readonly activeSetFloor: boolean;
  /** §2: the MAP fit's starts (warm start; extra prior draws; default start every k-th generation, §23). */
  readonly gpWarmStart: boolean;
  readonly gpRestarts: number;
  readonly gpColdStartEvery: number;
  /** §14: the GP mean. */
  readonly meanFunction: 'constant' | 'quadratic';
  /** §18: the mean step once the mean is quadratic, its trust radius, and the step of linear generations. */
  readonly meanStep: MeanStep;
  readonly trustRadius: number;
  readonly meanStepLinear: boolean;
  /** §19: the largest |eigenvalue| of the whitened covariance step once the mean is quadratic. */
  readonly covStepLimit: number;
  /** §22: μ and ν kept inside the study's bounds. */
  readonly meanInBounds: boolean;
  readonly meanStepFree: boolean;
  readonly covInBounds: boolean;
  /** §24: the model's optimum as a batch point, within ρ₀ = optimumRadius (adapting up to optimumRadiusMax when larger). */
  readonly injectOptimum: 'off' | 'basis' | 'weighted';
  readonly optimumRadius: number;
  readonly optimumRadiusMax: number;
  /**
   * §29: Powell's start phase (the 2d + 1 stencil, then the least-Frobenius-norm model's trust-region and
   * geometry steps) for the first `startPhaseLength` evaluations, or none ('off', length 0).
   */
  readonly startPhase: 'powell' | 'off';
  readonly startPhaseLength: number;
  /** §29: the model's interpolation points m (Powell's NPT). */
  readonly startPhasePoints: number;
  /** §29: Σ at the hand-over: the search's own (adapted during the phase) or the prior's. */
  readonly startPhaseHandover: 'search' | 'prior';
  /** §29: μ after each natural-gradient update of the phase and at the hand-over: the best point, or the search's own. */
  readonly startPhaseMean: 'best' | 'search';
  /** §29: the points of workers that ask while the model's point is out (startPhaseExtras). */
  readonly startPhaseExtras: 'model' | 'search';
  /**
   * §29: when a point of the model counts as far from the best (a geometry step replaces it first): beyond
   * 2Δ (NEWUOA's rule), or beyond max(2Δ, 10ρ) (BOBYQA's; what states written before this parameter use).
   */
  readonly startPhaseFar?: 'newuoa' | 'bobyqa';
  /** Bench switch: after the hand-over, Powell's iteration goes on and asks one point per generation. */
  readonly startPhaseTrail?: boolean;
  /** Bench switch: the search's Σ at the hand-over scaled up until its largest eigenvalue is at least this (the prior's is 1; 0 = off). */
  readonly startPhaseCovFloor?: number;
  /**
   * §33: the natural-gradient search restarts from the prior once it has converged (probnes-restart.ts).
   * Set with the start phase; absent in states written before it (and in the paper profile): never.
   */
  readonly restart?: RestartParams;
  /**
   * §30: on a conditional space, a conditional coordinate's μ and Σ move by their gradient given that
   * the coordinate is active (the natural gradient of the hierarchical distribution). Set by
   * initProbnesMixed on a conditional space; states written before it lack it and keep the gradient
   * averaged over every draw, so that stored studies continue as they were.
   */
  readonly conditionalGivenActive?: true;
}

/** §33: when the natural-gradient search counts as converged (probnes-restart.ts). */
export interface RestartParams {
  /** Evaluations without an improvement of the best value. */
  readonly after: number;
  /** An improvement counts when y < best − tol·(1 + |best|). */
  readonly tol: number;
  /** ν has contracted: √λ_max(Σ) below this (prior standard deviations). */
  readonly sigma: number;
}

/** What sets the three methods apart besides the covariance update: η_Σ's default and ρ₀ in the default profile. */
export interface ProbnesOwn {
  learningRateCov: number;
  optimumRadius: number;
}

type Row<K extends keyof ProbnesParams> = {
  option: string;
  spec: OptionSpec;
  /** Public (the API accepts it) or bench (ablation switches only benchmark code sets). */
  access: 'public' | 'bench';
  value: (profile: Profile, own: ProbnesOwn) => ProbnesParams[K];
};

const paper = (p: Profile) => p === 'paper';

/** Every parameter but the profile and the covariance form: its option, its spec and its default. */
const PARAMS: { [K in Exclude<keyof ProbnesParams, 'profile' | 'covForm' | 'startPhaseFar' | 'startPhaseTrail' | 'startPhaseCovFloor' | 'restart' | 'conditionalGivenActive' | 'startPhase' | 'startPhaseLength' | 'startPhasePoints' | 'startPhaseHandover' | 'startPhaseMean' | 'startPhaseExtras'>]: Row<K> } = {
  etaMean: { option: 'learning_rate_mean', spec: etaMean, access: 'public', value: () => 1 },
  etaCov: { option: 'learning_rate_cov', spec: etaCov, access: 'public', value: (_p, own) => own.learningRateCov },
  etaCovQuadratic: {
    option: 'learning_rate_cov_quadratic', access: 'public', value: (p, own) => (paper(p) ? own.learningRateCov : 1),
    spec: { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_Σ in generations whose GP mean has quadratic terms (learning_rate_cov otherwise; the paper profile has no such generations).' },
  },
  candidates: {
    option: 'candidates', access: 'public', value: () => 1000,
    spec: { kind: 'number', min: 1, max: 100_000, integer: true, description: 'Candidate batches scored by batch Bayesian quadrature per batch (cost of ask grows linearly with it).' },
  },
  activeSetCap: {
    option: 'active_set_cap', access: 'public', value: (p) => (paper(p) ? 0 : 50),
    spec: { kind: 'number', min: 0, max: 100_000, integer: true, description: 'Most points the GP is fitted on (the nearest to the distribution mean are kept), which bounds the cost per generation as the study grows; 0 = no cap (the paper).' },
  },
  gpRestarts: {
    option: 'gp_restarts', access: 'public', value: () => 0,
    spec: { kind: 'number', min: 0, max: 20, integer: true, description: 'Extra GP fit restarts from prior draws (more robust hyperparameters, at one fit each).' },
  },
  gradient: {
    option: 'gradient', access: 'bench', value: () => 'expected',
    spec: { kind: 'enum', values: ['expected', 'sampled'], description: 'BQ expected gradient (closed form) or a gradient sampled from the GP posterior (ablation).' },
  },
  gradientSamples: {
    option: 'gradient_samples', access: 'bench', value: () => 1000,
    spec: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Points drawn from ν for the sampled gradient.' },
  },
  acquisition: {
    option: 'acquisition', access: 'bench', value: () => 'batch-bq',
    spec: { kind: 'enum', values: ['batch-bq', 'none'], description: 'Batch Bayesian-quadrature variance reduction, or plain samples from ν.' },
  },
  candidatePool: {
    option: 'candidate_pool', access: 'bench', value: (p) => (paper(p) ? 0 : 200),
    spec: { kind: 'number', min: 0, max: 100_000, integer: true, description: 'When > 0, batch BQ forms its batch from this many points drawn from ν (see pool_selection) instead of scoring `candidates` batches of fresh draws; 0 = the paper\'s fresh batches.' },
  },
  poolSelection: {
    option: 'pool_selection', access: 'bench', value: () => 'random-batches',
    spec: { kind: 'enum', values: ['greedy', 'random-batches'], description: 'With candidate_pool > 0: build the batch greedily (each point maximises the variance reduction given the ones before), or take the best of `candidates` random batches of pool points.' },
  },
  includeMean: {
    option: 'include_mean', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'Evaluate the distribution mean μ as one point of every batch.' },
  },
  activeSet: {
    option: 'active_set', access: 'bench', value: () => true,
    spec: { kind: 'boolean', description: 'Fit the GP on the points inside the χ² ellipsoid of ν only (true) or on all points (false).' },
  },
  activeSetQuantile: {
    option: 'active_set_quantile', access: 'bench', value: () => 0.9973,
    spec: { kind: 'number', min: 0.5, max: 1, exclusiveMin: true, description: 'χ²_d quantile that bounds the active set (squared Mahalanobis distance).' },
  },
  activeSetFloor: {
    option: 'active_set_floor', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'Top the active set up with the nearest points to ⌈1.5·p⌉, p the size of the full quadratic basis, so the quadratic mean stays usable as Σ shrinks.' },
  },
  gpWarmStart: {
    option: 'gp_warm_start', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'Also start the GP fit from the previous generation\'s MAP hyperparameters and keep the better.' },
  },
  gpColdStartEvery: {
    option: 'gp_cold_start_every', access: 'bench', value: () => 1,
    spec: { kind: 'number', min: 0, max: 1000, integer: true, description: 'With a warm start, the GP fit also starts from the default hyperparameters in every k-th generation only (1 = every generation, 0 = only when there is no warm start).' },
  },
  meanFunction: {
    option: 'mean_function', access: 'bench', value: (p) => (paper(p) ? 'constant' : 'quadratic'),
    spec: { kind: 'enum', values: ['constant', 'quadratic'], description: 'GP mean: a learned constant, or explicit basis functions (the richest of constant, linear, diagonal and full quadratic with at least 1.5 points per coefficient), fitted by generalised least squares under the restricted likelihood.' },
  },
  meanStep: {
    option: 'mean_step', access: 'bench', value: (p) => (paper(p) ? 'natural' : 'line'),
    spec: { kind: 'enum', values: ['natural', 'line', 'newton', 'cauchy', 'newton-cauchy'], description: 'Mean step once the GP mean is quadratic: the natural-gradient step Σg_μ, the best step along it under the model, the model\'s Newton step (the natural step where the model is not concave), the trust-region Cauchy point, or the Newton step where the model is concave and the Cauchy point elsewhere; all but the first stay within trust_radius.' },
  },
  trustRadius: {
    option: 'trust_radius', access: 'bench', value: () => 2,
    spec: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'Largest mean step of every mean_step but natural (and of mean_step_linear), in Mahalanobis units of the current search distribution.' },
  },
  meanStepLinear: {
    option: 'mean_step_linear', access: 'bench', value: () => false,
    spec: { kind: 'boolean', description: 'In generations whose GP mean is linear, step along Σg_μ to trust_radius.' },
  },
  covStepLimit: {
    option: 'cov_step_limit', access: 'bench', value: () => 3,
    spec: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'Once the GP mean is quadratic: the largest |eigenvalue| of the whitened covariance step 2η_Σ L_Σᵀ G L_Σ (G is scaled down to it).' },
  },
  meanInBounds: {
    option: 'mean_in_bounds', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'Keep the distribution mean inside the parameter bounds (projected after each update).' },
  },
  meanStepFree: {
    option: 'mean_step_free', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'With mean_in_bounds: coordinates of the mean that sit on a bound the step pushes against are held there and the step is taken in the others (projected gradient).' },
  },
  covInBounds: {
    option: 'cov_in_bounds', access: 'bench', value: (p) => !paper(p),
    spec: { kind: 'boolean', description: 'Keep each marginal standard deviation of the search distribution at most the width of its parameter\'s bounds (Σ scaled as DΣD, correlations kept).' },
  },
  injectOptimum: {
    option: 'inject_optimum', access: 'bench', value: (p) => (paper(p) ? 'off' : 'weighted'),
    spec: { kind: 'enum', values: ['off', 'basis', 'weighted'], description: 'Once the GP mean is diagonal or full quadratic, evaluate a model optimum within optimum_radius of the search distribution as one point of each batch that keeps at least one batch-BQ point besides the mean: the maximiser of the GP\'s basis quadratic, or of lq-CMA-ES\'s rank-weighted least-squares quadratic on the recent points.' },
  },
  optimumRadius: {
    option: 'optimum_radius', access: 'bench', value: (p, own) => (paper(p) ? 2 : own.optimumRadius),
    spec: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'With inject_optimum: the trust region of the model\'s optimum, in Mahalanobis units of the search distribution.' },
  },
  optimumRadiusMax: {
    option: 'optimum_radius_max', access: 'bench', value: () => 0,
    spec: { kind: 'number', min: 0, max: 100, description: 'With inject_optimum: above optimum_radius, the trust radius of the model\'s optimum doubles, up to this value, after a generation whose model optimum was better than every value observed before it, and halves back toward optimum_radius otherwise (0 or at most optimum_radius: fixed).' },
  },
};

/**
 * §29: the start phase. Resolved apart from PARAMS: an option set that does not name it is read as 'off',
 * because the options stored with a study are its effective options (defaults filled in at creation), so
 * a study created before the phase existed names no `start_phase` and continues exactly as it was; a new
 * study's effective options name it (probnesDefaults).
 */
const START_PHASE: OptionSpec = {
  kind: 'enum', values: ['powell', 'off'],
  description: 'Start with Powell\'s model (the 2d + 1 stencil along the prior\'s axes, then the trust-region steps of a least-Frobenius-norm quadratic, each point computed from every result reported so far) for a number of evaluations set by max_trials and the dimension (docs/ALGORITHM.md §29), then the natural-gradient search from the best point; or off. Default profile: powell; paper profile: off. Continuous spaces only: with a categorical parameter the search starts as docs/ALGORITHM.md §27 says whatever this option says.',
};
const START_PHASE_POINTS: OptionSpec = {
  kind: 'number', min: 0, max: 1_000_000, integer: true,
  description: 'With start_phase powell: the model\'s interpolation points m (Powell\'s NPT), clamped to 2d + 1 … (d + 1)(d + 2)/2 (0 = the rule of docs/ALGORITHM.md §29).',
};

/** §29: the model's interpolation points for dimension d: `given` clamped to 2d + 1 … (d + 1)(d + 2)/2, or the rule (0). */
export function startPhasePoints(d: number, given = 0): number {
  const lo = 2 * d + 1, hi = ((d + 1) * (d + 2)) / 2;
  return given > 0 ? Math.min(hi, Math.max(lo, given)) : lo;
}

const START_PHASE_HANDOVER: OptionSpec = {
  kind: 'enum', values: ['search', 'prior'],
  description: 'With start_phase powell: Σ when the natural-gradient search takes over at the best point: the search\'s own, adapted during the phase, or the prior\'s.',
};

const START_PHASE_MEAN: OptionSpec = {
  kind: 'enum', values: ['best', 'search'],
  description: 'With start_phase powell: μ after each natural-gradient update of the phase and at the hand-over: the best point so far, or the search\'s own.',
};

const START_PHASE_FAR: OptionSpec = {
  kind: 'enum', values: ['newuoa', 'bobyqa'],
  description: 'With start_phase powell: a model point is far from the best, and replaced by a geometry step, beyond 2Δ (newuoa, the default) or beyond max(2Δ, 10ρ) (bobyqa).',
};

const START_PHASE_EXTRAS: OptionSpec = {
  kind: 'enum', values: ['model', 'search'],
  description: 'With start_phase powell: what a worker asking while the model\'s point is out gets: the model\'s next steps as if the pending points had come back as predicted, or batch-BQ points from ν (default: by the rule of docs/ALGORITHM.md §29).',
};

const START_PHASE_LENGTH: OptionSpec = {
  kind: 'number', min: 0, max: 1_000_000, integer: true,
  description: 'With start_phase powell: the phase\'s evaluations, overriding the rule of docs/ALGORITHM.md §29 (0 = the rule).',
};

/** §29: the start phase's parameters of a state without a phase (the paper profile, a mixed space, a state stored before it). */
export const NO_START_PHASE = Object.freeze({
  startPhase: 'off', startPhaseLength: 0, startPhasePoints: 0, startPhaseHandover: 'search', startPhaseMean: 'best', startPhaseExtras: 'search',
} as const satisfies Pick<ProbnesParams, 'startPhase' | 'startPhaseLength' | 'startPhasePoints' | 'startPhaseHandover' | 'startPhaseMean' | 'startPhaseExtras'>);

/**
 * §29: the start phase's length in evaluations for dimension d and the study's declared budget B
 * (max_trials; null: none). Measured on BBOB (docs/BENCHMARKS.md, "BBOB"): Powell's model reaches more
 * targets than the natural-gradient search up to about 10·d evaluations, and the search more after that,
 * so a budget of at most 10·d is the model's throughout; one of at most 20·d is the model's from d = 5 and
 * hands over at 5·d below; a larger or unknown budget hands over at max(5·d, 20), which keeps the 50·d results.
 */
export function startPhaseLength(d: number, budget: number | null): number {
  const late = Math.max(5 * d, 20);
  if (budget === null) return late;
  if (budget <= 10 * d) return budget;
  // Up to 20·d: the whole budget from d = 5 (d = 5 and 10 measured, level with Powell's methods); below, 5·d and
  // the natural-gradient search after it (d = 2: 37.5% of the BBOB targets at 20·d, against 35.9% handing over at
  // 10·d and 34.2% with no hand-over).
  if (budget <= 20 * d) return d >= 5 ? budget : 5 * d;
  return late;
}

/**
 * §29: what a worker gets while the model's point is out: the model's next steps as if the pending points
 * had come back as predicted ('model'), when the phase is the main search (at least 10·d evaluations, or
 * the whole declared budget); batch BQ from ν ('search'), the points the natural-gradient search that
 * follows learns most from, when the phase is a short prelude to it. Measured with 3 asynchronous workers
 * (docs/parallel-workers.md): 'model' gave more targets at 5·d and 10·d, 'search' at 50·d (d = 5).
 */
export function startPhaseExtras(d: number, length: number, budget: number | null): 'model' | 'search' {
  return length >= 10 * d || (budget !== null && length >= budget) ? 'model' : 'search';
}

/**
 * §33: when the search counts as converged and restarts: no decrease of the best value in max(5·d, 10)
 * evaluations while ν's largest standard deviation is below 10⁻³ prior standard deviations. Measured on the
 * paper protocol and BBOB (docs/ALGORITHM.md §33): a coarser improvement test (10⁻¹⁴ relative) cost the last
 * digits on Branin and Styblinski–Tang, a wider ν (10⁻²) BBOB targets on f14 at d = 2, and 10 evaluations at
 * d = 5 one target on f11.
 */
export const RESTART_DEFAULTS = Object.freeze({ tol: 0, sigma: 1e-3 });
export function restartAfterDefault(d: number): number {
  return Math.max(5 * d, 10);
}

const RESTART_OPTIONS: Record<string, OptionSpec> = {
  restart_after: { kind: 'number', min: 0, max: 1_000_000, integer: true, description: 'With start_phase powell: evaluations without an improvement of the best value after which a contracted search restarts from the prior (0 = never; default max(5·d, 10)).' },
  restart_tol: { kind: 'number', min: 0, max: 1, description: 'With restart_after: an improvement counts when y < best − tol·(1 + |best|) (default 0: any decrease).' },
  restart_sigma: { kind: 'number', min: 0, max: 100, description: 'With restart_after: the search has contracted when the largest standard deviation of ν, in prior units, is below this (default 1e-3).' },
};

function restartParams(options: Options, d: number): { restart?: RestartParams } {
  const num = (k: string, fallback: number) => (typeof options[k] === 'number' ? (options[k] as number) : fallback);
  const after = num('restart_after', restartAfterDefault(d));
  if (after <= 0) return {};
  return { restart: Object.freeze({ after, tol: num('restart_tol', RESTART_DEFAULTS.tol), sigma: num('restart_sigma', RESTART_DEFAULTS.sigma) }) };
}

const PROFILE: OptionSpec = {
  kind: 'enum', values: ['default', 'paper'],
  description: '`default` (ours: the paper\'s algorithm plus a quadratic GP mean with a model-based mean step, the model\'s optimum and μ in every batch, a capped active set, a warm-started GP fit and ν kept inside the bounds; docs/ALGORITHM.md §10) or `paper` (the published algorithm).',
};
const SNES_FORM: OptionSpec = { kind: 'enum', values: ['reference', 'natural'], description: 'SNES variance update: the reference form (σ⁴ factor) or the natural form.' };

const rows = Object.entries(PARAMS) as [keyof typeof PARAMS, Row<keyof typeof PARAMS>][];
const specsOf = (access: 'public' | 'bench'): Record<string, OptionSpec> => Object.fromEntries(rows.filter(([, r]) => r.access === access).map(([, r]) => [r.option, r.spec]));

/** The options the API accepts for the three methods. */
export const PROBNES_OPTIONS: OptionSpecs = { profile: PROFILE, start_phase: START_PHASE, ...specsOf('public') };
/**
 * Options of earlier releases whose paths were removed (the leave-one-out choice of the mean's basis,
 * and the optimum's gate that compensated for it): documents may hold them; paramsFromV1Options maps
 * them to the paths that remain.
 */
export const RETIRED_PROBNES_OPTIONS: readonly string[] = ['mean_basis', 'mean_basis_se', 'mean_basis_wide', 'mean_basis_scale', 'mean_basis_r2', 'optimum_gate'];

/** The ablation switches: accepted by the strategy (benchmark and test code), refused by the API. */
export function probnesBenchOptions(method: MethodName): OptionSpecs {
  return { ...specsOf('bench'), start_phase_length: START_PHASE_LENGTH, start_phase_points: START_PHASE_POINTS, start_phase_handover: START_PHASE_HANDOVER, start_phase_mean: START_PHASE_MEAN, start_phase_extras: START_PHASE_EXTRAS, start_phase_far: START_PHASE_FAR, start_phase_trail: { kind: 'boolean', description: 'With start_phase powell: Powell\'s iteration goes on after the hand-over, its next point one of every generation\'s.' }, start_phase_cov_floor: { kind: 'number', min: 0, max: 1, description: 'With start_phase powell: the search\'s Σ at the hand-over scaled up until its largest eigenvalue (in prior variances) is at least this; 0 = off.' }, ...RESTART_OPTIONS, ...(method === 'prob-snes' ? { snes_form: SNES_FORM } : {}) };
}

function profileOf(v: OptionValue | undefined): Profile {
  if (v === undefined || v === 'default' || v === 'paper') return v ?? 'default';
  throw new InvalidInputError(`option profile must be default or paper, got ${JSON.stringify(v)}`);
}

/** The public options' defaults for a profile (what a study's effective options show). */
export function probnesDefaults(profileName: string, own: ProbnesOwn): Options {
  const profile = profileOf(profileName);
  const out: Options = { profile, start_phase: paper(profile) ? 'off' : 'powell' };
  for (const [, r] of rows) if (r.access === 'public') out[r.option] = r.value(profile, own);
  return out;
}

function covFormOf(method: MethodName, snesForm: OptionValue): CovForm {
  if (method === 'prob-cmaes') return 'cmaes';
  if (method === 'prob-xnes') return 'xnes';
  return snesForm === 'reference' ? 'snes-reference' : 'snes-natural';
}

/**
 * The parameters for `options` (public and bench, each checked against its spec; an unknown key is
 * refused): every parameter the options do not set takes its profile's default.
 */
export function resolveProbnesParams(method: MethodName, own: ProbnesOwn, options: Options, d: number, budget: number | null = null): ProbnesParams {
  checkedOptions(method, { ...PROBNES_OPTIONS, ...probnesBenchOptions(method) }, options);
  const profile = profileOf(options.profile);
  const out: Record<string, OptionValue> = { profile };
  for (const [key, r] of rows) out[key] = options[r.option] ?? r.value(profile, own);
  out.covForm = covFormOf(method, options.snes_form ?? (paper(profile) ? 'reference' : 'natural'));
  // Options that do not name start_phase: off (START_PHASE's note).
  if (options.start_phase !== 'powell') return Object.freeze({ ...(out as unknown as ProbnesParams), ...NO_START_PHASE });
  const given = typeof options.start_phase_length === 'number' ? options.start_phase_length : 0;
  const length = given > 0 ? given : startPhaseLength(d, budget);
  const extras = options.start_phase_extras;
  return Object.freeze({
    ...(out as unknown as ProbnesParams),
    startPhase: 'powell',
    startPhaseLength: length,
    startPhasePoints: startPhasePoints(d, typeof options.start_phase_points === 'number' ? options.start_phase_points : 0),
    startPhaseHandover: options.start_phase_handover === 'prior' ? 'prior' : 'search',
    startPhaseMean: options.start_phase_mean === 'search' ? 'search' : 'best',
    startPhaseExtras: extras === 'model' || extras === 'search' ? extras : startPhaseExtras(d, length, budget),
    startPhaseFar: options.start_phase_far === 'bobyqa' ? 'bobyqa' : 'newuoa',
    ...(options.start_phase_trail === true ? { startPhaseTrail: true } : {}),
    ...(typeof options.start_phase_cov_floor === 'number' && options.start_phase_cov_floor > 0 ? { startPhaseCovFloor: options.start_phase_cov_floor } : {}),
    ...restartParams(options, d),
  });
}

/**
 * The parameters of a version-1 state, whose options were read by name with a fallback for each
 * option added after the first release (the value that kept the behaviour of states written before
 * it). Options of removed paths map to the path that remains: `mean_basis` (leave-one-out choices)
 * to the count rule, `optimum_gate` to the GP basis gate.
 */
export function paramsFromV1Options(method: MethodName, own: ProbnesOwn, o: Readonly<Record<string, unknown>>): ProbnesParams {
  const get = <T>(key: string, fallback: T): T => (o[key] === undefined ? fallback : (o[key] as T));
  const need = <T>(key: string): T => {
    if (o[key] === undefined) throw new InvalidInputError(`the stored ProbNES state has no option ${key}`);
    return o[key] as T;
  };
  const etaCovV1 = need<number>('learning_rate_cov');
  const params: ProbnesParams = {
    profile: profileOf(o.profile as OptionValue | undefined),
    etaMean: need('learning_rate_mean'),
    etaCov: etaCovV1,
    // Read only in generations with a quadratic mean, which a state without the option never had.
    etaCovQuadratic: get('learning_rate_cov_quadratic', etaCovV1),
    covForm: covFormOf(method, method === 'prob-snes' ? need('snes_form') : 'natural'),
    gradient: need('gradient'),
    gradientSamples: need('gradient_samples'),
    acquisition: need('acquisition'),
    candidates: need('candidates'),
    candidatePool: get('candidate_pool', 0),
    poolSelection: get('pool_selection', 'greedy'),
    includeMean: need('include_mean'),
    activeSet: need('active_set'),
    activeSetQuantile: need('active_set_quantile'),
    activeSetCap: get('active_set_cap', 0),
    activeSetFloor: get('active_set_floor', false),
    gpWarmStart: need('gp_warm_start'),
    gpRestarts: need('gp_restarts'),
    gpColdStartEvery: get('gp_cold_start_every', 1),
    meanFunction: get('mean_function', 'constant'),
    meanStep: get('mean_step', 'natural'),
    // Read only by steps other than the natural one, which a state without the option never took.
    trustRadius: get('trust_radius', 2),
    meanStepLinear: get('mean_step_linear', false),
    covStepLimit: get('cov_step_limit', 3),
    meanInBounds: get('mean_in_bounds', false),
    meanStepFree: get('mean_step_free', false),
    covInBounds: get('cov_in_bounds', false),
    injectOptimum: get('inject_optimum', 'off'),
    // The version-1 engine read optimum_radius in every tell; a state without it could not be told.
    optimumRadius: need('optimum_radius'),
    optimumRadiusMax: get('optimum_radius_max', 0),
    // The start phase (§29) came after version 2: no stored state had it.
    ...NO_START_PHASE,
  };
  return Object.freeze(params);
}
