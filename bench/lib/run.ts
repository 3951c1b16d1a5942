/**
 * One benchmark run: a (method, function, dim, seed) job driven through the strategy contract,
 * exactly as ALGORITHM.md §7 prescribes. Pure computation (no I/O), so it runs the same in-process
 * (tests) and in a worker thread (bench/paper.ts).
 *
 * Coordinates: the strategy sees u = (x − priorMean)/priorStd, where its prior is N(0, I)
 * (ALGORITHM.md §0); the objective is evaluated at x = priorMean + priorStd·u.
 */
import { performance } from 'node:perf_hooks';
import { STRATEGIES, resolveOptions, type MethodName, type OptionSpecs, type Options } from '../../src/engine/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import { generationSize, type Observation } from '../../src/engine/strategies/types.js';
import { getTask } from './tasks.js';

export interface RunSpec {
  method: MethodName;
  fn: string;
  dim: number;
  seed: number;
  budget: number;
  batch: number;
  priorMean: number[];
  priorStd: number[];
  /** Options given on the command line; only the keys the method knows are passed on. */
  options: Options;
  /** BO/πBO search box in x (InitSpec.box after mapping), or null for none. */
  box: { lower: number[]; upper: number[] } | null;
  /** Project every point (and the scored mean) onto the task's bounds before evaluating. */
  clip: boolean;
  /** The task's instance, for tasks that have instances (BBOB); the task's default otherwise. */
  instance?: number;
  /** The caller's name for this job, echoed in the record (bench:bbob: the method variant's label). */
  tag?: string;
  /** The budget the study declares (max_trials; InitSpec.budget), or none: the ProbNES start phase is sized by it. */
  maxTrials?: number | null;
}

export interface RunRecord {
  method: MethodName;
  function: string;
  dim: number;
  seed: number;
  batch: number;
  optimum: number;
  /** Every evaluated value, in order (the budget). */
  values: number[];
  /** f(μ_k) after the k-th update, k = 1, 2, …, evaluated outside the budget. */
  mean_values: number[];
  timings: { total_ms: number; ask_ms: number; tell_ms: number; updates: number };
  /** Wall ms since the run started, after the k-th update (k = 1, 2, …): the time to reach a budget. */
  elapsed_ms?: number[];
  /** Evaluations done after the k-th update (generations can differ in size). */
  generation_ends?: number[];
  /** The best evaluated point, in the task's coordinates (after projection onto its bounds). */
  best_x?: number[];
  /** The instance run, for tasks that have instances. */
  instance?: number;
  tag?: string;
}

/**
 * Every option a benchmark may set for a method: the public ones (the API's) and the bench-only
 * switches of the ablations, which only code that calls the strategy directly can pass.
 */
export function declaredOptions(method: MethodName): OptionSpecs {
  return { ...STRATEGIES[method].options, ...STRATEGIES[method].benchOptions };
}

/** Keeps the options a method declares (public or bench), so one --options blob can serve every method. */
export function optionsFor(method: MethodName, given: Options): Options {
  const known = declaredOptions(method);
  return Object.fromEntries(Object.entries(given).filter(([k]) => k in known));
}

/** What the loop needs of a job: the method, its seed and the protocol (budget, batch, options, box in u). */
export type LoopSpec = Pick<RunSpec, 'method' | 'dim' | 'seed' | 'budget' | 'batch' | 'options' | 'maxTrials'> & {
  box: { lower: number[]; upper: number[] } | null;
};

/**
 * The objective in the strategy's coordinates u: the value to minimise and the point the strategy is
 * told was evaluated (u itself, or the u of the projected point: ALGORITHM.md §0).
 */
export type Evaluate = (u: readonly number[]) => { y: number; told: number[] };

export type LoopResult = Pick<RunRecord, 'values' | 'mean_values' | 'timings' | 'elapsed_ms' | 'generation_ends'>;

/**
 * The ask/tell loop of ALGORITHM.md §7 over any objective: one generation per ask until the budget is
 * spent; after each update `valueAtMean(μ_k)` is recorded outside the budget, never shown to the strategy.
 */
export function runLoop(spec: LoopSpec, evaluate: Evaluate, valueAtMean: (u: readonly number[]) => number): LoopResult {
  const t0 = performance.now();
  const d = spec.dim;
  const strategy = getStrategy(spec.method);
  const options = resolveOptions(spec.method, d, optionsFor(spec.method, spec.options));
  let state = strategy.init({ dim: d, batchSize: spec.batch, options, box: spec.box, budget: spec.maxTrials ?? null }, Rng.fromSeed(spec.seed));

  const history: Observation[] = [];
  const values: number[] = [];
  const meanValues: number[] = [];
  const elapsed: number[] = [], ends: number[] = [];
  let askMs = 0, tellMs = 0;
  while (values.length < spec.budget) {
    // One generation per ask: batch (λ), or as many as lq-CMA-ES wants evaluated now.
    const count = Math.min(generationSize(state), spec.budget - values.length);
    let t = performance.now();
    const asked = strategy.ask(state, { history, pending: [] }, count);
    askMs += performance.now() - t;
    state = asked.state;
    const batch: Observation[] = asked.points.map((u) => {
      const { y, told } = evaluate(u);
      values.push(y);
      return { x: told, y };
    });
    history.push(...batch);
    t = performance.now();
    state = strategy.tell(state, { batch, history: [...history] });
    tellMs += performance.now() - t;
    meanValues.push(valueAtMean(state.mean));
    elapsed.push(performance.now() - t0);
    ends.push(values.length);
  }
  return {
    values,
    mean_values: meanValues,
    timings: { total_ms: performance.now() - t0, ask_ms: askMs, tell_ms: tellMs, updates: meanValues.length },
    elapsed_ms: elapsed,
    generation_ends: ends,
  };
}

export function runOne(spec: RunSpec): RunRecord {
  const bench = getTask(spec.fn, spec.dim, spec.instance);
  const { priorMean: m, priorStd: s, dim: d } = spec;
  if (m.length !== d || s.length !== d) throw new RangeError('prior mean/std must have the task dimension');
  const project = (x: number[]): number[] =>
    spec.clip ? x.map((v, i) => Math.min(bench.bounds.upper[i], Math.max(bench.bounds.lower[i], v))) : x;
  const toX = (u: readonly number[]): number[] => project(u.map((v, i) => m[i] + s[i] * v));
  const toU = (x: readonly number[]): number[] => x.map((v, i) => (v - m[i]) / s[i]);
  // The box is the task's bounds when points are projected onto it (clip), and every method that uses
  // a box gets it, as the service gives a study's bounds. Otherwise it is only BO/πBO's search region
  // (the methods with a box_std for unbounded parameters), not bounds: ProbNES would keep μ inside it.
  const boxIsBounds = spec.clip || 'box_std' in getStrategy(spec.method).options;
  const box = spec.box && boxIsBounds ? { lower: toU(spec.box.lower), upper: toU(spec.box.upper) } : null;
  const best: { y: number; x: number[] | null } = { y: Infinity, x: null };
  const result = runLoop(
    { ...spec, box },
    (u) => {
      const x = toX(u);
      const y = bench.f(x);
      if (best.x === null || y < best.y) Object.assign(best, { y, x });
      // The strategy is told the point actually evaluated (after projection), ALGORITHM.md §0.
      return { y, told: spec.clip ? toU(x) : [...u] };
    },
    (mean) => bench.f(toX(mean)),
  );
  return {
    method: spec.method,
    function: spec.fn,
    dim: d,
    seed: spec.seed,
    batch: spec.batch,
    optimum: bench.optimum,
    ...result,
    ...(best.x === null ? {} : { best_x: best.x }),
    ...(spec.instance === undefined ? {} : { instance: spec.instance }),
    ...(spec.tag === undefined ? {} : { tag: spec.tag }),
  };
}
