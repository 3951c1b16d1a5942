/**
 * The registry of multi-objective benchmark tasks: name → definition, kept apart from the
 * single-objective registry (index.ts) because a task here returns a vector of objectives and
 * constraint values and states its true front instead of an optimum value.
 *
 * Tasks: ZDT1–3 (zdt.ts), DTLZ2 for any number of objectives M ≤ d (dtlz.ts), the two-bar truss
 * with one constraint (truss.ts). Each states where its definition comes from and the hypervolume of
 * its true front in closed form.
 */
import { DTLZ2 } from './dtlz.js';
import type { MultiBenchmark, MultiBenchmarkDef } from './multi-types.js';
import { TRUSS2D } from './truss.js';
import { ZDT } from './zdt.js';

export type { MultiBenchmark, MultiBenchmarkDef, MultiEvaluation } from './multi-types.js';

export const MULTI_BENCHMARKS: Readonly<Record<string, MultiBenchmarkDef>> = Object.fromEntries([...ZDT, DTLZ2, TRUSS2D].map((b) => [b.name, b]));

export function multiBenchmarkNames(): string[] {
  return Object.keys(MULTI_BENCHMARKS);
}

/** The task `name` at dimension d (default: its default) with M objectives (tasks with a variable M only). */
export function getMultiBenchmark(name: string, d?: number, objectives?: number): MultiBenchmark {
  const def = MULTI_BENCHMARKS[name];
  if (!def) throw new RangeError(`unknown multi-objective benchmark ${name}; known: ${multiBenchmarkNames().join(', ')}`);
  if (objectives !== undefined && !def.variableObjectives && objectives !== def.defaultObjectives) {
    throw new RangeError(`benchmark ${name} has ${def.defaultObjectives} objectives, not ${objectives}`);
  }
  return def.make(d ?? def.defaultDim, objectives ?? def.defaultObjectives);
}
