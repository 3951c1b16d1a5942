/**
 * Multi-objective benchmark tasks, every objective to be MINIMISED, in the user's coordinates x.
 *
 * Glossary: d = dimension of x; M = number of objectives; F(x) = (f_1, …, f_M); c(x) = constraint
 * values, feasible when every c_j ≤ 0 (Optuna's convention); r = a reference point; HV = hypervolume
 * (src/engine/multi/hypervolume.ts). The true Pareto front is known in closed form for every task
 * here, and so is the hypervolume it dominates for any r beyond its nadir.
 */
import type { Box } from './types.js';

/** One evaluation: the objectives and the constraint values (empty for an unconstrained task). */
export interface MultiEvaluation {
  f: number[];
  c: number[];
}

/** One concrete multi-objective task at one dimension and number of objectives. */
export interface MultiBenchmark {
  name: string;
  dim: number;
  objectives: number;
  /** How many constraint values `evaluate` returns. */
  constraints: number;
  evaluate(x: readonly number[]): MultiEvaluation;
  bounds: Box;
  /** The reference point this task's hypervolume is stated for (beyond the front's nadir). */
  referencePoint: number[];
  /** HV of the true front for r (default `referencePoint`); throws unless r is beyond the front's nadir. */
  frontHypervolume(r?: readonly number[]): number;
  /** About n points of the true front, each the value of a Pareto-optimal x (`paretoSet`). */
  front(n: number): number[][];
  /** The Pareto-optimal x behind `front(n)`, in the same order. */
  paretoSet(n: number): number[][];
  /** Where the definition, the front and its hypervolume come from. */
  source: string;
}

/** A registry entry: the dimensions and objective counts the task is defined for. */
export interface MultiBenchmarkDef {
  name: string;
  minDim: number;
  defaultDim: number;
  /** Fixed for most tasks; DTLZ2 takes any M with 2 ≤ M ≤ d. */
  defaultObjectives: number;
  variableObjectives: boolean;
  make(d: number, objectives?: number): MultiBenchmark;
}

/** Throws unless r is a finite reference point of length M with r_i ≥ nadir_i. */
export function checkReference(name: string, r: readonly number[], nadir: readonly number[]): void {
  if (r.length !== nadir.length || !r.every((v, i) => Number.isFinite(v) && v >= nadir[i])) {
    throw new RangeError(`${name}: the closed-form hypervolume needs a reference point ≥ the front's nadir (${nadir.join(', ')}), got (${r.join(', ')})`);
  }
}

/** Evenly spaced t_k = k/(n − 1), k = 0…n − 1 (n ≥ 2). */
export function grid(n: number): number[] {
  const k = Math.max(2, Math.floor(n));
  return Array.from({ length: k }, (_, i) => i / (k - 1));
}
