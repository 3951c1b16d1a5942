/**
 * The strategy contract (ARCHITECTURE.md rule 2), evosax-style: `init / ask / tell` over plain,
 * versioned JSON state with the RNG state inside. Inputs are never mutated; every call returns a
 * new state. All coordinates are the whitened internal space of ALGORITHM.md §0, where the user's
 * prior is N(0, I); every strategy MINIMISES y.
 *
 * Glossary: d = dimension, q = batch size (λ for the evolution strategies), ν = N(mean, cov) the
 * search distribution; a point is number[] of length d.
 */
import type { Rng, RngState } from '../random/index.js';
import type { OptionSpecs, Options } from './options.js';
import type { MethodName } from './methods.js';
import type { Condition } from '../distributions/conditional.js';

/** Everything a strategy needs to start. */
export interface InitSpec {
  dim: number;
  /** q: points per generation (λ for CMA-ES/XNES/SNES). */
  batchSize: number;
  /**
   * Effective options for this method (resolveOptions already applied): the ones the API accepts
   * (StrategyDescriptor.options) and, from benchmark and test code only, its `benchOptions`. The
   * strategy checks them and resolves them once, here, into the typed `params` of its state.
   */
  options: Options;
  /**
   * Search box in internal coordinates, if the study has bounds (BO/πBO search inside it, the
   * ProbNES methods, XNES and SNES keep μ in it; CMA-ES and lq-CMA-ES ignore it; the domain
   * projects points onto the bounds). A bound may be ±∞ (an unbounded parameter of a method without box_std).
   */
  box?: { lower: number[]; upper: number[] } | null;
  /**
   * Categorical coordinates (methods whose descriptor declares `categorical`): the prior
   * probabilities of each categorical parameter's K choices. They are the last
   * `categories.length` coordinates of a point, each holding a choice index 0 … K−1; `dim` counts
   * them, and `mean`/`cov` of the state cover the other (continuous) coordinates only.
   */
  categories?: number[][];
  /**
   * Conditional coordinates (ALGORITHM.md §30; distributions/conditional.ts): each active only when
   * a categorical coordinate holds one of some choices, parents listed first. Only the methods
   * whose descriptor declares `categorical` get them; the GP methods and lq-CMA-ES's surrogate impute
   * inactive coordinates, the others ignore them (an inactive coordinate does not change the value).
   */
  conditions?: Condition[];
  /**
   * The evaluations the study declares it will spend (max_trials), if any: the ProbNES methods size
   * their start phase by it (docs/ALGORITHM.md §29); the other methods ignore it.
   */
  budget?: number | null;
  /**
   * Several objectives and/or constraints (ALGORITHM.md §32): M objectives (≥ 1) and K constraints
   * (≥ 0). With M > 1 or K > 0 the state records it (BaseState.outcomes) and every method scalarises
   * the observations' `f`, `c` and `infeasible` (strategies/outcomes.ts); absent, or M = 1 and K = 0,
   * changes nothing.
   */
  outcomes?: {
    objectives: number;
    constraints: number;
    /**
     * The hypervolume reference point the study declares, as minimised (the domain negated the
     * maximised objectives'): the decomposition normalises each objective from its ideal to it
     * (ALGORITHM.md §32.5). Absent: the study lets the service derive one.
     */
    reference?: number[];
  };
}

/** One evaluated point: internal coordinates and the value to minimise. */
export interface Observation {
  x: number[];
  y: number;
  /**
   * The standard error of y the user reported with it (y's units), if any. The ProbNES methods add
   * its square to the GP's noise at that point (ALGORITHM.md §28); the other methods ignore it.
   */
  stderr?: number | null;
  /**
   * Several objectives (ALGORITHM.md §32): the objective values as minimised (the domain negated the
   * maximised ones), one per objective. With `f`, `c` or `infeasible`, `y` is a placeholder (the first
   * objective's value, 0 for an infeasible point) and the strategy wrapper (strategies/outcomes.ts)
   * replaces it by the generation's scalarised value before the method reads it.
   */
  f?: number[];
  /** Constraint values, one per constraint: the point is feasible when every one is ≤ 0. */
  c?: number[];
  /** The point could not be evaluated (no `f`, no `c`): the methods learn to avoid it (ALGORITHM.md §32.4). */
  infeasible?: true;
}

export interface AskContext {
  /** Every evaluated point of the study so far (suggested and external), in order. */
  history: Observation[];
  /** Points handed out and not yet observed (ProbNES conditions its batch on them). */
  pending: number[][];
  /**
   * Optional: whether an internal point is worth evaluating, for a study with constraints or
   * infeasible points (ALGORITHM.md §32.3: PF(u) ≥ 0.05 under the feasibility model, set by
   * strategies/outcomes.ts with the bench option mo_feasibility on). The ProbNES default profile keeps only the admissible candidates of its
   * pool from ν (all of them when fewer than the batch needs are); every other method ignores it.
   */
  admissible?: (u: number[]) => boolean;
}

export interface TellContext {
  /** The results of the current generation's points, in the order they were asked. */
  batch: Observation[];
  /** Every evaluated point of the study so far, `batch` included. */
  history: Observation[];
  /**
   * Optional: the same history packed row by row (x: n·d coordinates, y: n values), kept by the
   * caller as the study grows. Strategies that scan the whole history on every update (the ProbNES
   * active set) read it instead of n objects; it must equal `history` (it is ignored when its sizes
   * do not match).
   */
  packed?: PackedHistory;
}

/** A history's points and values in two flat arrays: x[j·d + i] = history[j].x[i], y[j] = history[j].y. */
export interface PackedHistory {
  x: Float64Array;
  y: Float64Array;
}

/** Per-generation diagnostics reported in the study history (null where a method has none). */
export interface Diagnostics {
  integral_mean: number | null;
  integral_std: number | null;
  n_active: number | null;
}

/** Fields every strategy state carries. Concrete states extend it with plain JSON only. */
export interface BaseState {
  version: number;
  method: MethodName;
  dim: number;
  batchSize: number;
  /** Number of completed updates (tell calls). Never decreases. */
  generation: number;
  rng: RngState;
  /** The strategy's parameters, resolved once at init from the options (typed by each strategy); never change. */
  params: object;
  /** Current search distribution (for BO/random: the prior, N(0, I)). */
  mean: number[];
  cov: number[][];
  /** Per categorical coordinate (InitSpec.categories), the current probabilities of its choices. */
  categorical?: number[][];
  /** InitSpec.conditions, kept by the methods that model which coordinates are active (absent: none). */
  conditions?: Condition[];
  diagnostics: Diagnostics;
  /**
   * Results the current generation's update waits for, when that is not `batchSize` (read it with
   * generationSize()): lq-CMA-ES evaluates a few model-ranked candidates first and asks for more
   * while its surrogate does not yet rank them well.
   */
  generationSize?: number;
  /**
   * A study with several objectives or constraints (InitSpec.outcomes with M > 1 or K > 0): their
   * counts and the seed of the per-generation scalarisation weights (strategies/outcomes.ts). Absent:
   * one objective, no constraint.
   */
  outcomes?: OutcomesState;
}

/** BaseState.outcomes: M, K and the seed the weights of generation t derive from (with t). */
export interface OutcomesState {
  objectives: number;
  constraints: number;
  seed: number;
  /** The objectives' normalisation (absent: the feasible range). */
  norm?: 'feasible' | 'front';
  /** InitSpec.outcomes.reference: with norm 'front', each objective's range runs from its ideal to it. */
  reference?: number[];
  /** Violators' targets (absent: Deb's order, §32.3). */
  penalty?: 'additive';
  /** 'on': the batch keeps the candidates with PF ≥ 0.05 (§32.3, bench option mo_feasibility; absent: every candidate). */
  feasibility?: 'on';
  /** Decomposition (§32.2): every member's anchor on the simplex, member 0 first. */
  anchors?: number[][];
  /** α of the members' Dirichlet(1 + α·a_p) weights. */
  alpha?: number;
  /** The states of members 1 … P − 1 (member 0 is the state itself). */
  members?: BaseState[];
  /**
   * Restarts of stalled members (§32.5): a member whose last `after` generations put no point on the
   * feasible front starts again from `template` (the method's state at init, generator reseeded).
   * Absent: members never restart (the states of before).
   */
  restart?: { after: number; template: BaseState; stalls: number[]; count: number };
}

/** Results the current generation's update (tell) waits for: batchSize unless the state says otherwise. */
export function generationSize(state: BaseState): number {
  return state.generationSize ?? state.batchSize;
}

export interface AskResult<S extends BaseState> {
  points: number[][];
  state: S;
}

export interface Estimate {
  /** Model prediction of y at the distribution mean (null when the method has no model). */
  predicted: number | null;
  predicted_std: number | null;
  /**
   * The internal point the prediction is at, when it is not the distribution's centre (BO and πBO,
   * which have no search distribution: the evaluated configuration their model predicts best).
   */
  point?: number[];
}

export interface Strategy<S extends BaseState = BaseState> {
  readonly name: MethodName;
  init(spec: InitSpec, rng: Rng): S;
  /** `count` new points from the current distribution; may be called several times per generation. */
  ask(state: S, ctx: AskContext, count: number): AskResult<S>;
  /** Update the distribution from the generation's results; increments `generation`. */
  tell(state: S, ctx: TellContext): S;
  /** Model estimate of the value at the distribution mean, if the method has a model. */
  estimate?(state: S, history: Observation[]): Estimate;
}

/**
 * Everything the server knows about one method, in one place: the strategy itself and the facts
 * the rest of the server needs before calling it. The registry (registry.ts) holds one per method.
 */
export interface StrategyDescriptor<S extends BaseState = BaseState> extends Strategy<S> {
  /** What `options` may hold through the API: names, kinds, ranges (the API rejects anything else). */
  readonly options: OptionSpecs;
  /**
   * Switches only benchmark and test code set (ablations), which InitSpec.options also accepts; the
   * API refuses them.
   */
  readonly benchOptions?: OptionSpecs;
  /**
   * Options earlier releases accepted and this one no longer reads (their paths were removed): a
   * stored study or an exported document may still hold them, and the state migration decides what
   * they become.
   */
  readonly retiredOptions?: readonly string[];
  /** The effective defaults for dimension d and the chosen `profile` (only ProbNES has profiles). */
  defaults(d: number, profile: string): Options;
  /** The smallest batch_size the method accepts (2 for methods that rank a generation's points). */
  readonly minBatch: number;
  /**
   * Uses a box (BO, πBO search inside it; the ProbNES methods, XNES and SNES keep their mean in
   * it): InitSpec.box is given. Points are projected onto bounds either way.
   */
  readonly usesBox: boolean;
  /** Searches categorical coordinates (InitSpec.categories); the API refuses them for the others. */
  readonly categorical?: boolean;
  /** The `version` of the states it writes. */
  readonly stateVersion: number;
  /**
   * A stored state of any version this method ever wrote, as the current version (a state of the
   * current version is returned as it is). Throws InvalidInputError for a state it cannot read (a
   * newer version, or one that lacks what its version always held).
   */
  migrate(stored: StoredState): S;
}

/** The kind of method: what its state holds and how the server treats its calls (MethodFacts.family). */
export const METHOD_FAMILIES = ['probnes', 'bo', 'evolution-strategy', 'random'] as const;
export type MethodFamily = (typeof METHOD_FAMILIES)[number];

/**
 * What the rest of the server (and, through GET /v1/methods, the dashboard and the clients) needs to
 * know about a method besides its strategy. The registry (registry.ts METHOD_FACTS) holds one per
 * method; nothing else lists methods by name.
 */
export interface MethodFacts {
  /**
   * 'probnes': the three ProbNES methods (a GP of their own on an active set, kept in the state);
   * 'bo': BO and πBO (a GP on every evaluation, its MAP hyperparameters in the state);
   * 'evolution-strategy': CMA-ES, lq-CMA-ES, xNES, SNES; 'random'.
   */
  readonly family: MethodFamily;
  /**
   * Fits a model of the objective (the ProbNES methods' and BO's GP, lq-CMA-ES's surrogate): its
   * calls cost time that grows with the data. Without one (random, CMA-ES, xNES, SNES) a call is light.
   */
  readonly hasModel: boolean;
  /**
   * Ranks a generation's points and updates from its batch_size results only (its minBatch is 2):
   * points handed out beyond the generation are lost to it. The others learn from every result.
   */
  readonly ranksGeneration: boolean;
  /**
   * Keeps a search distribution it updates (BaseState mean and cov). BO, πBO and random keep none:
   * their state's mean and cov are the prior's spread around a centre.
   */
  readonly searchDistribution: boolean;
  /**
   * Its ask and tell read the history (AskContext/TellContext `history`): the model's data, the
   * best so far. CMA-ES, xNES, SNES and random read only the batch and their state, so the server
   * sends them no history at all (test/engine/method-facts.test.ts checks that theirs changes nothing).
   */
  readonly readsHistory: boolean;
  /**
   * Searches for a Pareto front of several objectives (ALGORITHM.md §32.2: a random scalarisation per
   * generation, strategies/outcomes.ts). The API refuses a study of several objectives with a method
   * without it.
   */
  readonly multiObjective: boolean;
  /** Learns from constraint values and infeasible points (ALGORITHM.md §32.3–§32.4). */
  readonly constraints: boolean;
}

/** A state as read back from storage: plain JSON with its version. */
export type StoredState = { version: number; method: string } & Record<string, unknown>;
