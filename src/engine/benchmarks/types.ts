/**
 * Benchmark objectives, all to be MINIMISED, in the user's (external) coordinates x.
 *
 * Glossary: d = dimension; x = number[] of length d; f* = `optimum` (the global minimum value);
 * x* = `argmin` (one global minimiser, when known); `bounds` = the task's customary search box
 * (the published domain). A benchmark does not clip: runners decide whether to project onto bounds.
 */
export interface Box {
  lower: number[];
  upper: number[];
}

/** An isotropic Gaussian prior over x, for tasks whose paper protocol fixes one (CartPole, GP-mll). */
export interface PriorSpec {
  mean: number[];
  std: number[];
}

/** One concrete task at one dimension. */
export interface Benchmark {
  name: string;
  dim: number;
  f(x: readonly number[]): number;
  /** f*, the global minimum value used for regret. */
  optimum: number;
  argmin: number[] | null;
  bounds: Box;
  /** The prior of the paper's protocol for this task, if it has one (the test functions do not). */
  prior?: PriorSpec;
  /** Where the definition and f* come from. */
  source: string;
}

/** A registry entry: a fixed-dimension task or one defined for any d ≥ 1. */
export interface BenchmarkDef {
  name: string;
  /** The one dimension this task has, or 'any'. */
  dim: number | 'any';
  /** Dimension used when the caller does not choose one. */
  defaultDim: number;
  /** The task comes in seeded instances (BBOB); `make`'s second argument picks one. */
  instances?: boolean;
  make(d: number, instance?: number): Benchmark;
}

/** Repeats a scalar interval d times. */
export function cube(d: number, lo: number, hi: number): Box {
  return { lower: Array(d).fill(lo), upper: Array(d).fill(hi) };
}

/** Guards every objective: a wrong-length point is a caller bug that would otherwise give NaN. */
export function checkDim(name: string, x: readonly number[], d: number): void {
  if (x.length !== d) throw new RangeError(`${name}: expected a point of dimension ${d}, got ${x.length}`);
}
