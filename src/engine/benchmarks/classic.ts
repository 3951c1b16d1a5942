/**
 * The paper's synthetic test functions, as defined in BoTorch (`botorch/test_functions/synthetic.py`),
 * which are the formulas of the Virtual Library of Simulation Experiments (sfu.ca/~ssurjano).
 * ALGORITHM.md §7 names them; constants are the published ones.
 */
import { type Benchmark, type BenchmarkDef, checkDim, cube } from './types.js';

const TWO_PI = 2 * Math.PI;

function sumSq(x: readonly number[]): number {
  let s = 0;
  for (const v of x) s += v * v;
  return s;
}

/** Ackley: a = 20, b = 0.2, c = 2π; f* = 0 at 0; domain [−32.768, 32.768]^d. */
export function ackley(x: readonly number[], a = 20, b = 0.2, c = TWO_PI): number {
  const d = x.length;
  let cosSum = 0;
  for (const v of x) cosSum += Math.cos(c * v);
  return -a * Math.exp(-b * Math.sqrt(sumSq(x) / d)) - Math.exp(cosSum / d) + a + Math.E;
}

/** Rastrigin: 10d + Σ (x_i² − 10 cos 2πx_i); f* = 0 at 0; domain [−5.12, 5.12]^d. */
export function rastrigin(x: readonly number[]): number {
  let s = 10 * x.length;
  for (const v of x) s += v * v - 10 * Math.cos(TWO_PI * v);
  return s;
}

/** Griewank: Σ x_i²/4000 − Π cos(x_i/√i) + 1 (i from 1); f* = 0 at 0; domain [−600, 600]^d. */
export function griewank(x: readonly number[]): number {
  let prod = 1;
  for (let i = 0; i < x.length; i++) prod *= Math.cos(x[i] / Math.sqrt(i + 1));
  return sumSq(x) / 4000 - prod + 1;
}

/**
 * Levy: w_i = 1 + (x_i − 1)/4;
 * sin²(πw_1) + Σ_{i<d} (w_i − 1)²[1 + 10 sin²(πw_i + 1)] + (w_d − 1)²[1 + sin²(2πw_d)];
 * f* = 0 at 1; domain [−10, 10]^d.
 */
export function levy(x: readonly number[]): number {
  const d = x.length;
  const w = x.map((v) => 1 + (v - 1) / 4);
  let s = Math.sin(Math.PI * w[0]) ** 2;
  for (let i = 0; i < d - 1; i++) s += (w[i] - 1) ** 2 * (1 + 10 * Math.sin(Math.PI * w[i] + 1) ** 2);
  s += (w[d - 1] - 1) ** 2 * (1 + Math.sin(TWO_PI * w[d - 1]) ** 2);
  return s;
}

/** Styblinski–Tang: ½ Σ (x_i⁴ − 16x_i² + 5x_i); domain [−5, 5]^d. */
export function styblinskiTang(x: readonly number[]): number {
  let s = 0;
  for (const v of x) s += v ** 4 - 16 * v * v + 5 * v;
  return s / 2;
}

/**
 * The 1-D Styblinski–Tang minimiser, solved here by Newton on g'(t) = 4t³ − 32t + 5 instead of
 * quoting a rounded constant: SFU prints f* = −39.16599·d and BoTorch −39.166166·d, while the true
 * value is −39.16616570377…·d. Regret must use the true value or it goes negative near x*.
 */
function styblinskiTangRoot(): number {
  let t = -2.9;
  for (let k = 0; k < 50; k++) t -= (4 * t ** 3 - 32 * t + 5) / (12 * t * t - 32);
  return t;
}
export const STYBLINSKI_TANG_XSTAR = styblinskiTangRoot();
export const STYBLINSKI_TANG_FSTAR_1D = styblinskiTang([STYBLINSKI_TANG_XSTAR]);

/** Branin (2-D), the standard constants a = 1, b = 5.1/(4π²), c = 5/π, r = 6, s = 10, t = 1/(8π). */
export function branin(x: readonly number[]): number {
  const [x1, x2] = x;
  const b = 5.1 / (4 * Math.PI * Math.PI);
  const c = 5 / Math.PI;
  const t = 1 / (8 * Math.PI);
  return (x2 - b * x1 * x1 + c * x1 - 6) ** 2 + 10 * (1 - t) * Math.cos(x1) + 10;
}
/**
 * Branin's minimisers share one exact value: at (π, 2.275) the squared term is exactly 0
 * (b·π² = 1.275, c·π = 5) and cos π = −1, so f* = 10 − 10(1 − t) = 10t = 10/(8π) = 0.3978873577…
 * (BoTorch quotes the rounded 0.397887). We use the exact value.
 */
export const BRANIN_FSTAR = 10 / (8 * Math.PI);

/** Three-hump camel (2-D): 2x₁² − 1.05x₁⁴ + x₁⁶/6 + x₁x₂ + x₂²; f* = 0 at 0; domain [−5, 5]². */
export function threeHumpCamel(x: readonly number[]): number {
  const [x1, x2] = x;
  return 2 * x1 * x1 - 1.05 * x1 ** 4 + x1 ** 6 / 6 + x1 * x2 + x2 * x2;
}

/** Sphere Σ x_i²; f* = 0 at 0. */
export function sphere(x: readonly number[]): number {
  return sumSq(x);
}

/** Rosenbrock Σ_{i<d} 100(x_{i+1} − x_i²)² + (x_i − 1)²; f* = 0 at 1; domain [−5, 10]^d (SFU). */
export function rosenbrock(x: readonly number[]): number {
  let s = 0;
  for (let i = 0; i + 1 < x.length; i++) s += 100 * (x[i + 1] - x[i] * x[i]) ** 2 + (x[i] - 1) ** 2;
  return s;
}

const BOTORCH = 'BoTorch botorch/test_functions/synthetic.py = SFU Virtual Library (sfu.ca/~ssurjano)';

/** A task defined for any d ≥ 1 with a closed-form optimum. */
function anyDim(
  name: string,
  fn: (x: readonly number[]) => number,
  opts: { lo: number; hi: number; xstar: number; fstar: (d: number) => number; source?: string; minDim?: number },
): BenchmarkDef {
  return {
    name,
    dim: 'any',
    defaultDim: 2,
    make(d: number): Benchmark {
      if (!(Number.isInteger(d) && d >= (opts.minDim ?? 1))) throw new RangeError(`${name}: invalid dimension ${d}`);
      return {
        name,
        dim: d,
        f: (x) => (checkDim(name, x, d), fn(x)),
        optimum: opts.fstar(d),
        argmin: Array(d).fill(opts.xstar),
        bounds: cube(d, opts.lo, opts.hi),
        source: opts.source ?? BOTORCH,
      };
    },
  };
}

/** A task with one fixed dimension. */
export function fixedDim(
  name: string,
  d: number,
  build: () => Omit<Benchmark, 'name' | 'dim' | 'f'> & { fn: (x: readonly number[]) => number },
): BenchmarkDef {
  return {
    name,
    dim: d,
    defaultDim: d,
    make(dd: number): Benchmark {
      if (dd !== d) throw new RangeError(`${name} is ${d}-dimensional, not ${dd}-dimensional`);
      const { fn, ...rest } = build();
      return { name, dim: d, f: (x) => (checkDim(name, x, d), fn(x)), ...rest };
    },
  };
}

export const CLASSIC: BenchmarkDef[] = [
  anyDim('ackley', (x) => ackley(x), { lo: -32.768, hi: 32.768, xstar: 0, fstar: () => 0 }),
  anyDim('rastrigin', rastrigin, { lo: -5.12, hi: 5.12, xstar: 0, fstar: () => 0 }),
  anyDim('griewank', griewank, { lo: -600, hi: 600, xstar: 0, fstar: () => 0 }),
  anyDim('levy', levy, { lo: -10, hi: 10, xstar: 1, fstar: () => 0 }),
  anyDim('styblinski-tang', styblinskiTang, {
    lo: -5,
    hi: 5,
    xstar: STYBLINSKI_TANG_XSTAR,
    fstar: (d) => STYBLINSKI_TANG_FSTAR_1D * d,
    source: `${BOTORCH}; f* computed by Newton (−39.16616570…·d), not the rounded published constants`,
  }),
  anyDim('sphere', sphere, { lo: -5, hi: 5, xstar: 0, fstar: () => 0, source: 'Σ x_i²' }),
  anyDim('rosenbrock', rosenbrock, { lo: -5, hi: 10, xstar: 1, fstar: () => 0, minDim: 2, source: BOTORCH }),
  fixedDim('branin', 2, () => ({
    fn: branin,
    optimum: BRANIN_FSTAR,
    argmin: [Math.PI, 2.275],
    bounds: { lower: [-5, 0], upper: [10, 15] },
    source: `${BOTORCH}; f* = 10/(8π) = 0.3978873577 exactly`,
  })),
  fixedDim('three-hump-camel', 2, () => ({
    fn: threeHumpCamel,
    optimum: 0,
    argmin: [0, 0],
    bounds: cube(2, -5, 5),
    source: BOTORCH,
  })),
];
