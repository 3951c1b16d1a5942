/**
 * What a result means: the one place that knows which of two values is better. A study optimises
 * its objective in a direction; an observation's outcome is what the user reported for it; the
 * engine sees every outcome as a value it minimises. Every other module asks here (the loop, the
 * reports, early stopping, the model views, imports, the storage's evaluation rows through
 * evaluations.ts) and none flips a sign or compares two values for "better" on its own.
 *
 * Today a study has one objective and an outcome is one value with an optional standard error; the
 * types are the ones several objectives and constraints will extend (an `Objective` per objective,
 * an `Outcome` with one value per objective).
 */
import type { Observation } from '../../engine/index.js';

export type Direction = 'minimize' | 'maximize';

/** One objective of a study: which way is better. */
export interface Objective {
  direction: Direction;
}

/** What a user reported for one evaluation: its value and, optionally, the value's standard error. */
export interface Outcome {
  value: number;
  stderr: number | null;
}

/** The study's objective (a study has one today). */
export function objectiveOf(study: { direction: Direction }): Objective {
  return OBJECTIVES[study.direction];
}

const OBJECTIVES: Record<Direction, Objective> = { minimize: Object.freeze({ direction: 'minimize' }), maximize: Object.freeze({ direction: 'maximize' }) };

/**
 * The value the engine minimises for a value of the objective (every strategy minimises):
 * the value itself when the study minimises, its negative when it maximises.
 */
export function engineValue(o: Objective, value: number): number {
  return o.direction === 'maximize' ? -value : value;
}

/** The objective's value for a value the engine computed (a prediction, an integral): engineValue's inverse. */
export function objectiveValue(o: Objective, engine: number): number {
  return engineValue(o, engine);
}

/** Strictly better. */
export function better(o: Objective, a: number, b: number): boolean {
  return engineValue(o, a) < engineValue(o, b);
}

/** For sorting best first: negative when a is better than b, positive when worse, 0 on a tie. */
export function compareBest(o: Objective, a: number, b: number): number {
  return engineValue(o, a) - engineValue(o, b);
}

/** The worst value there is: every finite value is better (the best of nothing). */
export function worstValue(o: Objective): number {
  return objectiveValue(o, Infinity);
}

/** The best of these values (the first on ties); worstValue for none. */
export function bestOf(o: Objective, values: Iterable<number>): number {
  let best = worstValue(o);
  for (const v of values) if (better(o, v, best)) best = v;
  return best;
}

/**
 * Simple regret of a best-so-far value against the known optimum f*: best − f* when minimising,
 * f* − best when maximising, so it is ≥ 0 whenever f* really is the optimum and 0 on reaching it.
 */
export function regret(o: Objective, bestSoFar: number, knownOptimum: number): number {
  return engineValue(o, bestSoFar - knownOptimum);
}

/**
 * An evaluated point as the engine reads it: the point x, the value it minimises, and the reported
 * standard error (a standard error keeps its sign whatever the direction; absent when none).
 */
export function engineObservation(o: Objective, x: number[], outcome: Outcome): Observation {
  const y = engineValue(o, outcome.value);
  return outcome.stderr === null ? { x, y } : { x, y, stderr: outcome.stderr };
}

/**
 * What the API reports next to a value so that clients and the dashboard can rank results without
 * knowing the direction: the value the engine minimises (lower is better, whatever the direction);
 * null without a value.
 */
export function lossOf(o: Objective, value: number | null): number | null {
  return value === null ? null : engineValue(o, value);
}
