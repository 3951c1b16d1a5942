/**
 * lq-CMA-ES: CMA-ES assisted by a global linear-quadratic surrogate (N. Hansen, "A Global
 * Surrogate Assisted CMA-ES", GECCO 2019, hal-02143961). The CMA-ES part is cmaes.ts's update;
 * the model is surrogate/quadratic.ts; the loop over one CMA iteration is the paper's:
 *
 *   1. sample λ candidates (one of them the model's optimum, injected), rank them by the model;
 *   2. truly evaluate the first n_eval of them in model order, n_eval = ⌊1 + max(0.02 λ, 4 − N)⌋
 *      (N = data in the model), add the results to the model's data and refit;
 *   3. Kendall's τ between the true values and the model's values on the most recent
 *      max(15, min(1.2 n_evaluated, 0.75 λ)) data; if τ < 0.85 and candidates remain,
 *      n_eval ← n_eval + ⌈n_eval/2⌉, re-rank the rest by the refitted model, go to 2;
 *   4. update CMA-ES with the true values if every candidate was evaluated, otherwise with the
 *      surrogate values of all λ candidates shifted so that their minimum equals the best true value
 *      of the iteration (the ranking is the model's, the level the truth's).
 *
 * In this service one CMA iteration spans one or more of the service's generations: each pass of
 * step 2 is a generation whose size (BaseState.generationSize) is the number of points still to be
 * evaluated; `ask` hands out exactly the model-ranked candidates, `tell` runs steps 2–4 on the
 * results. Candidates the surrogate ranks without evaluating them are never handed out.
 *
 * Glossary: λ = batchSize; the population is the iteration's λ candidates; y = true value
 * (minimised); f̂ = the surrogate; τ = Kendall's rank correlation (surrogate/kendall.ts).
 *
 * Categorical parameters (InitSpec.categories; ALGORITHM.md §27): the CMA-ES part is CatCMA's
 * (catcma.ts): cmaUpdate on the d_c continuous coordinates and CatCMA's update of one categorical
 * distribution q_j per categorical parameter (catcma.ts updateCategorical), both from the population ranked as
 * step 4 ranks it (true values, or the surrogate's). The surrogate is surrogate/mixed-quadratic.ts:
 * the linear-quadratic model in the continuous coordinates plus a linear term per choice indicator,
 * with conditional coordinates (§30) imputed; everything else (n_eval, Kendall's τ and its threshold,
 * the model's data) is the same. The injected candidate is the model's optimum in the continuous
 * coordinates with choices drawn from q like every other candidate's, so q's update only ever ranks
 * draws from q; without continuous coordinates nothing is injected. A state without `categorical` is
 * the numeric method, unchanged draw for draw.
 */
import { InvalidInputError } from '../errors.js';
import { Rng } from '../random/index.js';
import { kendallTau } from '../surrogate/kendall.js';
import { fitModel, maxModelSize, modelOptimum, predict, type Observed } from '../surrogate/quadratic.js';
import { fitMixedModel, mixedMaxModelSize, mixedModelOptimum, predictMixed, type MixedLayout } from '../surrogate/mixed-quadratic.js';
import { mixedLayout, sampleChoices } from '../distributions/categorical.js';
import { checkConditions } from '../distributions/conditional.js';
import { CMA_OPTIONS, cmaParams, cmaSample, cmaStart, cmaUpdate, type AsngState, type CmaParams, type CmaStep, type CmaesState } from './cma-core.js';
import { NO_DIAGNOSTICS, assertFinite, checkBatch, checkCount, migrateOptionsState } from './es-utils.js';
import { continuousStart, sampleMixed, startCategorical, updateCategorical } from './catcma.js';
import { checkedOptions, type Options, type OptionSpecs } from './options.js';
import type { AskContext, AskResult, BaseState, InitSpec, Observation, StrategyDescriptor, TellContext } from './types.js';

/** Version 2: `params` instead of the options (version 1 is read by `migrate`). */
export const LQ_CMAES_STATE_VERSION = 2;

/** One candidate of the current CMA iteration. */
export interface Candidate {
  x: number[];
  /** The true value once evaluated, else null. */
  y: number | null;
  /** Handed out (to be evaluated) in this iteration. */
  out: boolean;
  /** Not a sample of N(m, σ²C): the model optimum, or a point evaluated in place of a sample (projected onto bounds, external). */
  injected: boolean;
}

/** lq-CMA-ES's parameters, resolved once at init: CMA-ES's, the τ threshold and the model optimum's injection. */
export interface LqCmaParams extends CmaParams {
  readonly tauThreshold: number;
  readonly injectOptimum: boolean;
}

export interface LqCmaesState extends BaseState, Pick<CmaesState, 'sigma' | 'C' | 'p_sigma' | 'p_c'> {
  method: 'lq-cmaes';
  params: LqCmaParams;
  /** CMA-ES updates so far (`generation` counts the service's generations, one or more per update). */
  cma_generation: number;
  /**
   * The model's data from earlier iterations: the most recent first, each iteration's points best
   * first, at most maxModelSize(n, λ).
   */
  archive: Observed[];
  /** The current iteration's candidates. */
  population: Candidate[];
  /** How many candidates the iteration evaluates in all so far (step 2's n_eval). */
  n_eval: number;
  /** Candidates not yet handed out, in the order to hand them out (the model's ranking, best first). */
  queue: number[];
  /** Candidates handed out since the last tell, in the order handed out. */
  handed: number[];
  /** Kendall's τ of the last tell (null before the first). */
  tau: number | null;
  /** With categorical parameters: ASNG's state of the categorical update (catcma.ts); absent otherwise. */
  asng?: AsngState;
}

/** The paper's threshold on Kendall's τ above which the surrogate ranking is trusted. */
export const TAU_THRESHOLD = 0.85;

/** Step 2's first n_eval: ⌊1 + max(0.02 λ, 3/0.75 − N)⌋, at most λ (N = data in the model). */
export function firstEvaluations(lambda: number, dataSize: number): number {
  return Math.min(lambda, Math.floor(1 + Math.max(0.02 * lambda, 4 - dataSize)));
}

/** How many of the most recent data Kendall's τ compares: max(15, min(1.2 n_evaluated, 0.75 λ)). */
export function tauSampleSize(lambda: number, evaluated: number): number {
  return Math.floor(Math.max(15, Math.min(1.2 * evaluated, 0.75 * lambda)));
}

/** The parameters for `options` (tau_threshold defaults to the paper's 0.85, inject_optimum to true). */
function lqParams(options: Options): LqCmaParams {
  const t = options.tau_threshold ?? TAU_THRESHOLD;
  if (typeof t !== 'number' || !(t > -1 && t <= 1)) throw new InvalidInputError(`lq-cmaes: tau_threshold must be a number in (−1, 1], got ${String(t)}`);
  return Object.freeze({ ...cmaParams(options), tauThreshold: t, injectOptimum: options.inject_optimum !== false });
}

const key = (x: readonly number[]): string => x.join(',');

/** A fitted surrogate: its value at a point and its optimum (null: nothing to inject). */
interface Surrogate {
  value(x: readonly number[]): number;
  optimum(): number[] | null;
}

/** The layout of a state with categorical parameters, for the mixed surrogate. */
function layoutOf(state: LqCmaesState): MixedLayout {
  const { dc, K } = mixedLayout(state);
  return { dc, K, conditions: state.conditions ?? [] };
}

/** The surrogate for `data`: quadratic.ts's model, or mixed-quadratic.ts's with categorical parameters. */
function fitSurrogate(state: LqCmaesState, data: readonly Observed[]): Surrogate {
  if (!state.categorical) {
    const model = fitModel(data, state.dim);
    return { value: (x) => predict(model, x), optimum: () => modelOptimum(model, state.dim) };
  }
  const model = fitMixedModel(data, layoutOf(state));
  return { value: (x) => predictMixed(model, x), optimum: () => (model.layout.dc > 0 ? mixedModelOptimum(model) : null) };
}

/** `count` samples of the search distribution: N(m, σ²C), then with categorical parameters a choice from each q_j. */
function sample(state: LqCmaesState, rng: Rng, count: number): number[][] {
  return state.categorical ? sampleMixed(state, rng, count) : cmaSample(state, rng, count);
}

/** The iteration's evaluated candidates best first, then the archive, cut to the size limit. */
function modelData(state: LqCmaesState, population: readonly Candidate[]): Observed[] {
  const fresh = population
    .filter((c) => c.y !== null)
    .map((c) => ({ x: c.x, y: c.y! }))
    .sort((a, b) => a.y - b.y);
  const { dc, K } = mixedLayout(state);
  const limit = state.categorical ? mixedMaxModelSize(dc, K, state.batchSize) : maxModelSize(state.dim, state.batchSize);
  return [...fresh, ...state.archive].slice(0, limit);
}

/** Indices sorted by the model's value, best first (ties keep index order); unranked without a model. */
function rankByModel(model: Surrogate | null, population: readonly Candidate[], indices: number[]): number[] {
  if (!model) return indices;
  const f = new Map(indices.map((i) => [i, model.value(population[i].x)]));
  return [...indices].sort((a, b) => f.get(a)! - f.get(b)!);
}

/**
 * A new CMA iteration: λ candidates (the model optimum first, if the model has data and injection is
 * on), ranked by the model; the first n_eval of them make the next generation.
 */
function startIteration(state: LqCmaesState, rng: Rng, model: Surrogate | null): LqCmaesState {
  const lambda = state.batchSize;
  const injected: Candidate[] = [];
  if (model && state.params.injectOptimum) {
    const xopt = model.optimum();
    // With categorical parameters the optimum's choices are drawn from q (header).
    if (xopt?.every(Number.isFinite)) injected.push({ x: state.categorical ? [...xopt, ...sampleChoices(rng, state.categorical)] : xopt, y: null, out: false, injected: true });
  }
  const samples = sample(state, rng, lambda - injected.length).map((x): Candidate => ({ x, y: null, out: false, injected: false }));
  const population = [...injected, ...samples];
  // A model from fewer than two points ranks nothing (every candidate gets the same value).
  const ranker = state.archive.length > 1 ? model : null;
  const nEval = firstEvaluations(lambda, state.archive.length);
  return {
    ...state,
    rng: rng.state(),
    population,
    n_eval: nEval,
    queue: rankByModel(ranker, population, population.map((_, i) => i)),
    handed: [],
    generationSize: nEval,
  };
}

function init(spec: InitSpec, rng: Rng): LqCmaesState {
  const params = lqParams(checkedOptions('lq-cmaes', LQ_OPTIONS, spec.options));
  const q = spec.categories ?? [];
  const start = q.length === 0 ? cmaStart(spec, 'lq-cmaes', params) : continuousStart(spec, 'lq-cmaes', params);
  const state: LqCmaesState = {
    version: LQ_CMAES_STATE_VERSION, method: 'lq-cmaes', dim: spec.dim, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), params, diagnostics: { ...NO_DIAGNOSTICS }, ...start,
    cma_generation: 0, archive: [], population: [], n_eval: 0, queue: [], handed: [], tau: null, generationSize: 0,
    ...(q.length > 0 ? startCategorical(q) : {}),
    ...(q.length > 0 && spec.conditions?.length ? { conditions: checkConditions(spec.conditions, spec.dim - q.length, q.map((p) => p.length)) } : {}),
  };
  return startIteration(state, rng, null);
}

/**
 * The next `count` candidates in the model's order; once none is left (clients asking for more
 * than the generation needs), fresh samples of the current distribution, which join the
 * population only if their results come back in a tell.
 */
function ask(state: LqCmaesState, _ctx: AskContext, count: number): AskResult<LqCmaesState> {
  checkCount(count, 'lq-cmaes');
  const take = state.queue.slice(0, count);
  const population = state.population.map((c, i) => (take.includes(i) ? { ...c, out: true } : c));
  const points = take.map((i) => population[i].x.slice());
  let rng = state.rng;
  if (points.length < count) {
    const r = Rng.fromState(state.rng);
    points.push(...sample(state, r, count - points.length));
    rng = r.state();
  }
  return { points, state: { ...state, rng, population, queue: state.queue.slice(take.length), handed: [...state.handed, ...take] } };
}

/**
 * Records the told results on the population: a point equal (bit for bit) to an unevaluated
 * candidate is that candidate's result; any other point (projected onto bounds, a fresh sample,
 * an external point) takes the place of the next handed-out candidate that has no result yet, or
 * else joins the population; both count as injected. Results of handed-out candidates that came
 * in after an earlier tell are picked up from the history.
 */
function recordResults(state: LqCmaesState, ctx: TellContext): Candidate[] {
  const population = state.population.map((c) => ({ ...c }));
  const open = new Map<string, number>();
  population.forEach((c, i) => c.y === null && open.set(key(c.x), i));
  const unmatched: Observation[] = [];
  for (const o of ctx.batch) {
    const i = open.get(key(o.x));
    if (i === undefined) {
      unmatched.push(o);
      continue;
    }
    population[i].y = o.y;
    population[i].out = true;
    open.delete(key(o.x));
  }
  for (const o of ctx.history) {
    const i = open.get(key(o.x));
    if (i === undefined || !population[i].out) continue;
    population[i].y = o.y;
    open.delete(key(o.x));
  }
  const stand = state.handed.filter((i) => population[i].y === null);
  for (const o of unmatched) {
    const i = stand.shift();
    const c: Candidate = { x: o.x.slice(), y: o.y, out: true, injected: true };
    if (i === undefined) population.push(c);
    else population[i] = c;
  }
  return population;
}

function tell(state: LqCmaesState, ctx: TellContext): LqCmaesState {
  checkBatch(ctx.batch, state.dim, 'lq-cmaes');
  const threshold = state.params.tauThreshold;
  const population = recordResults(state, ctx);
  const data = modelData(state, population);
  const model = fitSurrogate(state, data);
  const evaluated = population.filter((c) => c.y !== null);
  // Step 3: τ between truth and model on the most recent data (fewer than 3 pairs say nothing).
  const recent = data.slice(0, tauSampleSize(state.batchSize, evaluated.length));
  const tau = recent.length < 3 ? 0 : kendallTau(recent.map((o) => o.y), recent.map((o) => model.value(o.x)));
  const rest = population.map((_, i) => i).filter((i) => !population[i].out);
  const diagnostics = { ...state.diagnostics, n_active: evaluated.length };

  if (tau < threshold && rest.length > 0) {
    // More evaluations in this iteration: the next generation is the next best-ranked candidates.
    const nEval = state.n_eval + Math.ceil(state.n_eval / 2);
    const handedOut = population.length - rest.length;
    return {
      ...state,
      generation: state.generation + 1,
      population,
      n_eval: nEval,
      queue: rankByModel(model, population, rest),
      handed: [],
      generationSize: Math.max(1, Math.min(nEval, population.length) - handedOut),
      tau,
      diagnostics,
    };
  }

  // Step 4: true values when all are known, else the surrogate's, shifted to the best true value.
  const allKnown = evaluated.length === population.length;
  let ranked = population.map((_, i) => i);
  let values: number[];
  if (allKnown) values = population.map((c) => c.y!);
  else {
    const fhat = population.map((c) => model.value(c.x));
    const fhatMin = Math.min(...fhat);
    const yMin = Math.min(...evaluated.map((c) => c.y!));
    values = fhat.map((f) => f - fhatMin + yMin);
    if (!values.every(Number.isFinite)) {
      // The surrogate gives no finite value to some candidate (an extrapolation beyond the double
      // range, with values near it): its ranking cannot be trusted, so the update ranks the evaluated
      // candidates by their true values only (a smaller population, as CMA-ES does with a partial batch).
      ranked = ranked.filter((i) => population[i].y !== null);
      values = population.map((c) => c.y ?? NaN);
    }
  }
  assertFinite(ranked.map((i) => values[i]), 'lq-cmaes: population values');
  const order = ranked.sort((a, b) => values[a] - values[b]);
  const step = order.length >= 2 ? cmaStep(state, order.map((i) => population[i])) : {};
  const updated: LqCmaesState = {
    ...state,
    ...step,
    generation: state.generation + 1,
    cma_generation: state.cma_generation + 1,
    archive: data,
    tau,
    diagnostics,
  };
  return startIteration(updated, Rng.fromState(state.rng), model);
}

/**
 * Step 4's update from ≥ 2 candidates ranked best first: CMA-ES's; with categorical parameters,
 * CMA-ES's on the continuous coordinates and CatCMA's on q (header).
 */
function cmaStep(state: LqCmaesState, ranked: readonly Candidate[]): Partial<CmaStep> & { categorical?: number[][]; asng?: AsngState } {
  if (!state.categorical) return cmaUpdate(state, ranked.map((c) => c.x), ranked.map((c) => c.injected), state.cma_generation);
  const { dc } = mixedLayout(state);
  const cont = dc > 0 ? cmaUpdate({ ...state, dim: dc }, ranked.map((c) => c.x.slice(0, dc)), ranked.map((c) => c.injected), state.cma_generation) : {};
  return { ...cont, ...updateCategorical(state, ranked.map((c) => c.x.slice(dc))) };
}

const LQ_OPTIONS: OptionSpecs = {
  ...CMA_OPTIONS,
  tau_threshold: { kind: 'number', min: -1, max: 1, exclusiveMin: true, description: 'Kendall τ between true and surrogate ranks from which the surrogate ranks the rest of the population (the paper: 0.85).' },
  inject_optimum: { kind: 'boolean', description: 'Make the surrogate model\'s optimum one of the candidates of every CMA iteration (the paper does).' },
};

export const lqCmaes: StrategyDescriptor<LqCmaesState> = {
  name: 'lq-cmaes',
  options: LQ_OPTIONS,
  defaults: () => ({ sigma0: 1, active: true, tau_threshold: TAU_THRESHOLD, inject_optimum: true }),
  minBatch: 2,
  usesBox: false,
  categorical: true,
  stateVersion: LQ_CMAES_STATE_VERSION,
  migrate: (stored) => migrateOptionsState<LqCmaesState>('lq-cmaes', LQ_CMAES_STATE_VERSION, stored, lqParams),
  init,
  ask,
  tell,
};
