/**
 * The engine calls of the optimisation loop, through the EngineRunner (a worker pool in the
 * server, inline in most tests): initial state, ask, tell. Plain messages in and out; nothing here
 * touches storage.
 */
import { EngineError, getStrategy, type BaseState, type InitSpec, type MethodName, type Options } from '../../engine/index.js';
import type { EngineRunner } from '../pool/engine-pool.js';
import { DomainError } from '../common/errors.js';
import { needsOutcomeModel, referenceLoss, type StudyOutcomes } from '../results/outcomes.js';
import { activeNamed, categoryPriors, engineConditions, internalBox, legalize, materialize, toUserRaw, type Materialized, type SearchSpace } from './transforms.js';

/** `budget`: the study's max_trials (null: none), which sizes the ProbNES start phase (docs/ALGORITHM.md §29). */
export function initSpec(method: MethodName, batchSize: number, options: Options, space: SearchSpace, budget: number | null, outcomes: StudyOutcomes | null = null): InitSpec {
  // Methods that use a box get it (an unbounded parameter: ±box_std for BO/πBO, ±∞ for a method
  // without box_std); all get the bounds by projection (handOut).
  const box = getStrategy(method).usesBox ? internalBox(space, Number(options.box_std ?? Infinity)) : null;
  const categories = categoryPriors(space);
  const conditions = engineConditions(space);
  // The declared reference point as the engine minimises (engineValue per objective): the decomposition's normalisation.
  const r = outcomes ? referenceLoss(outcomes) : null;
  const reference = r ? { reference: r } : {};
  const several = outcomes && needsOutcomeModel(outcomes) ? { outcomes: { objectives: outcomes.objectives.length, constraints: outcomes.constraints.length, ...reference } } : {};
  return { dim: space.parameters.length, batchSize, options, box, budget, ...(categories.length > 0 ? { categories } : {}), ...(conditions.length > 0 ? { conditions } : {}), ...several };
}

export async function initialState(runner: EngineRunner, method: MethodName, spec: InitSpec, seed: number): Promise<BaseState> {
  const { result } = await runner.run({ op: 'init', method, spec, seed });
  if (result.op !== 'init') throw new Error(`engine answered ${result.op} to init`);
  return result.state;
}

/** An engine failure while points are needed now: 503, with the engine's code in the message. */
export class EngineUnavailableError extends DomainError {
  constructor(cause: unknown) {
    const what = cause instanceof EngineError ? `${cause.code}: ${cause.message}` : (cause as Error)?.message ?? String(cause);
    super('unavailable', 'engine_error', `the optimiser could not compute new points (${what}); retry later`);
  }
}

/**
 * The point handed out for an internal point u, and what the engine learns from. When handing out
 * changes nothing (no projection, no rounding) the engine gets u itself back, bit for bit, rather
 * than u after a round trip through user units (equal up to rounding error): strategies such as
 * CMA-ES recognise their own samples by exact comparison and treat anything else as injected.
 */
export function handOut(space: SearchSpace, u: readonly number[]): Materialized {
  const raw = toUserRaw(space, u);
  const legal = legalize(space, raw);
  if (legal.every((v, i) => Object.is(v, raw[i]))) return { parameters: activeNamed(space, raw), point: [...u] };
  return materialize(space, u);
}
