/**
 * ZDT1, ZDT2 and ZDT3: E. Zitzler, K. Deb, L. Thiele, "Comparison of multiobjective evolutionary
 * algorithms: empirical results", Evolutionary Computation 8(2), 2000 (published with d = 30).
 *
 * x ∈ [0, 1]^d, d ≥ 2; f_1 = x_1; g = 1 + 9 Σ_{i≥2} x_i/(d − 1); f_2 = g·h(f_1, g) with
 * ZDT1 h = 1 − √(f_1/g), ZDT2 h = 1 − (f_1/g)², ZDT3 h = 1 − √(f_1/g) − (f_1/g) sin(10π f_1).
 * The Pareto set is g = 1 (x_i = 0 for i ≥ 2), so the front is f_2 = φ(f_1) := h(f_1, 1), over
 * f_1 ∈ [0, 1] for ZDT1 and ZDT2 and over five disjoint intervals for ZDT3 (where φ is below its
 * running minimum).
 *
 * Hypervolume of the front for r ≥ nadir: with ψ(a) = min_{t ≤ a} φ(t) on the front (the staircase's
 * lower edge, flat after the front's last f_1), HV(r) = ∫_0^{r_1} (r_2 − ψ(a)) da. ZDT1:
 * r_1 r_2 − ∫_0^1 (1 − √a) da = r_1 r_2 − 1/3 (2/3 at r = (1, 1)); ZDT2: r_1 r_2 − 2/3 (1/3 at
 * (1, 1)); ZDT3: the same integral in closed form over the intervals, ∫ t sin(kt) dt =
 * sin(kt)/k² − t cos(kt)/k, with their end points computed here to 1e-15 by bisection (the
 * published ones, 0.0830015349 … 0.8518328654, to ten digits, are what the test checks them against).
 */
import { checkReference, grid, type MultiBenchmark, type MultiBenchmarkDef } from './multi-types.js';
import { checkDim, cube } from './types.js';

const K = 10 * Math.PI;
type Shape = 'zdt1' | 'zdt2' | 'zdt3';

function h(shape: Shape, f1: number, g: number): number {
  const q = f1 / g;
  if (shape === 'zdt1') return 1 - Math.sqrt(q);
  if (shape === 'zdt2') return 1 - q * q;
  return 1 - Math.sqrt(q) - q * Math.sin(K * f1);
}

/** ZDT3's front curve φ(t) = 1 − √t − t sin(10πt), its derivative and an antiderivative. */
const phi3 = (t: number): number => 1 - Math.sqrt(t) - t * Math.sin(K * t);
const dphi3 = (t: number): number => -0.5 / Math.sqrt(t) - Math.sin(K * t) - K * t * Math.cos(K * t);
const intPhi3 = (t: number): number => t - (2 / 3) * t ** 1.5 - (Math.sin(K * t) / (K * K) - (t * Math.cos(K * t)) / K);

/** The root of `fn` in [lo, hi], where fn(lo) and fn(hi) differ in sign, by bisection. */
function bisect(fn: (t: number) => number, lo: number, hi: number): number {
  const sLo = Math.sign(fn(lo));
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (Math.sign(fn(mid)) === sLo) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * ZDT3's front intervals [a_k, b_k] of f_1: b_k are the local minima of φ that lie below every
 * earlier value, a_k (k ≥ 1) the last point before b_k where φ comes down to the previous level φ(b_{k−1}).
 */
function zdt3Intervals(): [number, number][] {
  const steps = 20000;
  const crit: { t: number; min: boolean }[] = [];
  let prev = dphi3(1e-12);
  for (let i = 1; i <= steps; i++) {
    const t = i / steps;
    const cur = dphi3(t);
    if (Math.sign(cur) !== Math.sign(prev)) crit.push({ t: bisect(dphi3, (i - 1) / steps, t), min: prev < 0 });
    prev = cur;
  }
  const out: [number, number][] = [];
  let level = Infinity;
  let lastMax = 0;
  for (const c of crit) {
    if (!c.min) {
      lastMax = c.t;
      continue;
    }
    if (phi3(c.t) >= level) continue;
    const a = out.length === 0 ? 0 : bisect((t) => phi3(t) - level, lastMax, c.t);
    out.push([a, c.t]);
    level = phi3(c.t);
  }
  return out;
}

export const ZDT3_INTERVALS: readonly (readonly [number, number])[] = zdt3Intervals();

/** ∫_0^{r_1} (r_2 − ψ(a)) da for ZDT3. */
function zdt3Hypervolume(r1: number, r2: number): number {
  let hv = 0;
  for (let k = 0; k < ZDT3_INTERVALS.length; k++) {
    const [a, b] = ZDT3_INTERVALS[k];
    hv += r2 * (b - a) - (intPhi3(b) - intPhi3(a));
    const next = k + 1 < ZDT3_INTERVALS.length ? ZDT3_INTERVALS[k + 1][0] : r1;
    hv += (r2 - phi3(b)) * (next - b);
  }
  return hv;
}

/** The front's f_1 values: n evenly spaced on [0, 1], or spread over ZDT3's intervals by length. */
function frontF1(shape: Shape, n: number): number[] {
  if (shape !== 'zdt3') return grid(n);
  const total = ZDT3_INTERVALS.reduce((s, [a, b]) => s + b - a, 0);
  return ZDT3_INTERVALS.flatMap(([a, b]) => grid(Math.round((n * (b - a)) / total)).map((t) => a + t * (b - a)));
}

function makeZdt(shape: Shape, d: number): MultiBenchmark {
  if (!(Number.isInteger(d) && d >= 2)) throw new RangeError(`${shape} needs an integer dimension ≥ 2, got ${d}`);
  const nadir = shape === 'zdt3' ? [ZDT3_INTERVALS[ZDT3_INTERVALS.length - 1][1], 1] : [1, 1];
  const paretoSet = (n: number): number[][] => frontF1(shape, n).map((t) => [t, ...Array<number>(d - 1).fill(0)]);
  return {
    name: shape,
    dim: d,
    objectives: 2,
    constraints: 0,
    evaluate(x) {
      checkDim(shape, x, d);
      let s = 0;
      for (let i = 1; i < d; i++) s += x[i];
      const g = 1 + (9 * s) / (d - 1);
      return { f: [x[0], g * h(shape, x[0], g)], c: [] };
    },
    bounds: cube(d, 0, 1),
    referencePoint: [1.1, 1.1],
    frontHypervolume(r = [1.1, 1.1]) {
      checkReference(shape, r, nadir);
      if (shape === 'zdt1') return r[0] * r[1] - 1 / 3;
      if (shape === 'zdt2') return r[0] * r[1] - 2 / 3;
      return zdt3Hypervolume(r[0], r[1]);
    },
    front: (n) => frontF1(shape, n).map((t) => [t, h(shape, t, 1)]),
    paretoSet,
    source: 'Zitzler, Deb & Thiele (2000), Evolutionary Computation 8(2); the front and its HV derived in src/engine/benchmarks/zdt.ts',
  };
}

export const ZDT: MultiBenchmarkDef[] = (['zdt1', 'zdt2', 'zdt3'] as const).map((shape) => ({
  name: shape,
  minDim: 2,
  defaultDim: 30,
  defaultObjectives: 2,
  variableObjectives: false,
  make: (d: number) => makeZdt(shape, d),
}));
