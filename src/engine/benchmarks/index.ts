/**
 * The benchmark registry: name → task definition. Fixed-dimension tasks reject any other d;
 * 'any'-dimension tasks are instantiated per d with `getBenchmark(name, d)`.
 */
import { BBOB } from './bbob.js';
import { CARTPOLE } from './cartpole.js';
import { CLASSIC } from './classic.js';
import { ROTATED_ELLIPSOID } from './ellipsoid.js';
import { GP_MLL } from './gp-mll.js';
import { SHEKEL } from './shekel.js';
import type { Benchmark, BenchmarkDef } from './types.js';

export type { Benchmark, BenchmarkDef, Box, PriorSpec } from './types.js';

export const BENCHMARKS: Readonly<Record<string, BenchmarkDef>> = Object.fromEntries(
  [...CLASSIC, SHEKEL, ROTATED_ELLIPSOID, GP_MLL, CARTPOLE, ...BBOB].map((b) => [b.name, b]),
);

export function benchmarkNames(): string[] {
  return Object.keys(BENCHMARKS);
}

/** The task `name` at dimension d (default: its fixed or default dimension), and instance (tasks with instances only). */
export function getBenchmark(name: string, d?: number, instance?: number): Benchmark {
  const def = BENCHMARKS[name];
  if (!def) throw new RangeError(`unknown benchmark ${name}; known: ${benchmarkNames().join(', ')}`);
  if (instance !== undefined && !def.instances) throw new RangeError(`benchmark ${name} has no instances`);
  return def.make(d ?? def.defaultDim, instance);
}

/** Regret f − f*, clamped at 0 (rounding can put a point a hair below a stored f*). */
export function regret(b: Pick<Benchmark, 'optimum'>, value: number): number {
  return Math.max(0, value - b.optimum);
}
