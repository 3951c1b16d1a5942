/**
 * COCO's BBOB noiseless suite (Hansen, Finck, Ros, Auger, "Real-Parameter Black-Box Optimization
 * Benchmarking 2009: Noiseless Functions Definitions", INRIA RR-6829): the 24 functions f1–f24,
 * each in any dimension d ≥ 2 and any instance k ≥ 1, generated exactly as the suite generates them
 * (bbob/instances.ts), so `bbobProblem(f, d, k)` is the field's instance k of f in d dimensions.
 *
 * Registered as the tasks `bbob-f1` … `bbob-f24`; `getBenchmark('bbob-f7', 5, 3)` is f7, d = 5,
 * instance 3 (instance 1 by default). The search domain is [−5, 5]^d; outside it most functions add
 * the boundary penalty f_pen.
 */
import { F01_F14 } from './bbob/f01-f14.js';
import { F15_F24 } from './bbob/f15-f24.js';
import { bbobFopt, bbobSeed } from './bbob/instances.js';
import { isNoisyFunction, noisyParts, NOISY_NAMES } from './bbob/noisy.js';
import type { Benchmark, BenchmarkDef } from './types.js';
import { checkDim, cube } from './types.js';

const BUILDERS = [...F01_F14, ...F15_F24];

export const BBOB_FUNCTIONS = 24;

/** The suite's function names (RR-6829's section titles, shortened). */
export const BBOB_NAMES: readonly string[] = [
  'Sphere', 'Ellipsoid separable', 'Rastrigin separable', 'Büche-Rastrigin', 'Linear slope',
  'Attractive sector', 'Step ellipsoid', 'Rosenbrock original', 'Rosenbrock rotated',
  'Ellipsoid', 'Discus', 'Bent cigar', 'Sharp ridge', 'Different powers',
  'Rastrigin', 'Weierstrass', 'Schaffers F7', 'Schaffers F7 ill-conditioned', 'Griewank-Rosenbrock F8F2',
  'Schwefel x·sin(x)', 'Gallagher 101 peaks', 'Gallagher 21 peaks', 'Katsuura', 'Lunacek bi-Rastrigin',
];

/** One BBOB problem: function fn ∈ 1…24, dimension d ≥ 2, instance ≥ 1. */
export interface BbobProblem extends Benchmark {
  fn: number;
  instance: number;
  /** x_opt; for f5 the corner beyond which f is constant at f_opt. */
  argmin: number[];
}

/** The dimension and instance checks every BBOB problem (noiseless or noisy) makes. */
function checkDimInstance(fn: number, d: number, instance: number): void {
  if (!(Number.isInteger(d) && d >= 2)) throw new RangeError(`bbob-f${fn}: dimension must be an integer ≥ 2, got ${d}`);
  if (!(Number.isInteger(instance) && instance >= 1)) throw new RangeError(`bbob-f${fn}: instance must be an integer ≥ 1, got ${instance}`);
}

/** g, checking first that x has the problem's dimension d. */
function checked<T>(name: string, d: number, g: (x: readonly number[]) => T): (x: readonly number[]) => T {
  return (x) => {
    checkDim(name, x, d);
    return g(x);
  };
}

export function bbobProblem(fn: number, d: number, instance = 1): BbobProblem {
  if (!(Number.isInteger(fn) && fn >= 1 && fn <= BBOB_FUNCTIONS)) throw new RangeError(`bbob: function must be an integer in 1…${BBOB_FUNCTIONS}, got ${fn}`);
  checkDimInstance(fn, d, instance);
  const seed = bbobSeed(fn, instance);
  const fopt = bbobFopt(fn, instance);
  const { xopt, raw } = BUILDERS[fn - 1](d, seed);
  const name = `bbob-f${fn}`;
  return {
    name,
    fn,
    instance,
    dim: d,
    f: checked(name, d, (x) => raw(x) + fopt),
    optimum: fopt,
    argmin: xopt,
    bounds: cube(d, -5, 5),
    source: `BBOB f${fn} (${BBOB_NAMES[fn - 1]}), instance ${instance}, RR-6829`,
  };
}

/** The registry entries bbob-f1 … bbob-f24 (instance 1 unless the caller names one). */
export const BBOB: readonly BenchmarkDef[] = Array.from({ length: BBOB_FUNCTIONS }, (_, i) => ({
  name: `bbob-f${i + 1}`,
  dim: 'any' as const,
  defaultDim: 2,
  instances: true,
  make: (d: number, instance?: number) => bbobProblem(i + 1, d, instance ?? 1),
}));

export { NOISY_FUNCTIONS, NOISY_NAMES, isNoisyFunction, type NoisyFunction } from './bbob/noisy.js';

/** One moderate-noise problem of the noisy suite (f101–f106): `f` is noisy, `fTrue` the noise-free value. */
export interface NoisyBbobProblem extends BbobProblem {
  fTrue(x: readonly number[]): number;
  /** The noise's standard deviation at x (null for the Cauchy model, whose outliers have none). */
  noiseStd(x: readonly number[]): number | null;
  /** The value the noisy f is centred on at x: its mean, or its median for the Cauchy model. */
  fCentre(x: readonly number[]): number;
}

/**
 * f101–f106 (bbob/noisy.ts), dimension d ≥ 2, instance ≥ 1; the noise draws come from `noiseSeed`
 * (default: the instance), in the order of the calls. Not in the task registry: a noisy objective
 * is scored by the noise-free value of the point a method recommends, not by its best evaluation.
 */
export function bbobNoisyProblem(fn: number, d: number, instance = 1, noiseSeed = instance): NoisyBbobProblem {
  if (!isNoisyFunction(fn)) throw new RangeError(`bbob noisy: function must be one of 101…106, got ${fn}`);
  checkDimInstance(fn, d, instance);
  const parts = noisyParts(fn, d, instance, noiseSeed);
  const name = `bbob-f${fn}`;
  return {
    name,
    fn,
    instance,
    dim: d,
    f: checked(name, d, (x) => parts.f(x)),
    fTrue: checked(name, d, (x) => parts.fTrue(x)),
    noiseStd: checked(name, d, (x) => parts.noiseStd(x)),
    fCentre: checked(name, d, (x) => parts.fCentre(x)),
    optimum: parts.fopt,
    argmin: parts.xopt,
    bounds: cube(d, -5, 5),
    source: `BBOB f${fn} (${NOISY_NAMES[fn]}), instance ${instance}, RR-6869`,
  };
}
