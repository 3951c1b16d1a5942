/**
 * The two-bar truss, a constrained bi-objective design problem: K. Deb, Multi-Objective Optimization
 * Using Evolutionary Algorithms (Wiley, 2001), and C. Chafekar, J. Xuan, K. Rasheed, "Constrained
 * multi-objective optimization using steady state genetic algorithms", GECCO 2003; the constants as
 * in pymoo's `Truss2D`. Two bars AC and BC of cross-sections x_1, x_2 (m², ≤ 0.01) meet at C, a height
 * y ∈ [1, 3] m above B, and carry a load of 100 kN:
 *   f_1 = V = x_1 √(16 + y²) + x_2 √(1 + y²)          (volume, m³)
 *   f_2 = S = max(σ_AC, σ_BC), σ_AC = 20 √(16 + y²)/(y x_1), σ_BC = 80 √(1 + y²)/(y x_2)   (kPa)
 *   c_1 = S − 10⁵ ≤ 0.
 * A cross-section of 0 leaves no bar: its stress is +∞ and so is c_1 (the evaluation is impossible).
 *
 * The front, derived here: for a stress bound S both stresses are tight at the optimum,
 * x_1 = 20√(16 + y²)/(yS), x_2 = 80√(1 + y²)/(yS), so V·S = 100 (4/y + y), least at y = 2. That needs
 * x_2 = 40√5/S ≤ 0.01, i.e. S ≥ S_b = 4000√5: there V* = 400/S. Below S_b the bound x_2 = 0.01 is
 * active, y = 1/√((S/8000)² − 1) ∈ [2, 3] and V* = 100 (4/y + y)/S, down to y = 3, the least stress
 * S_min = 8000√10/3 (both sections at most 0.01), where V* = 1.3/√10/8 = 0.051387…. The front is
 * S ∈ [S_min, 10⁵], V* from 0.051387 down to 0.004; pymoo's `_calc_pareto_front` gives the same two
 * pieces. Its hypervolume for r = (r_V, r_S) with r_V ≥ V*(S_min) and r_S ≥ 10⁵ is
 * HV = r_V (r_S − S_min) − ∫_{S_min}^{r_S} V*(S) dS, where, substituting S(y) on the lower piece
 * (V dS = −100 (4/y² − 3/(1 + y²)) dy), ∫_{S_min}^{S_b} V* dS = 100 (2/3 − 3 arctan(1/7)),
 * ∫_{S_b}^{10⁵} V* dS = 400 ln(10⁵/S_b), and beyond 10⁵ (infeasible) V* stays 0.004.
 */
import { checkReference, grid, type MultiBenchmark, type MultiBenchmarkDef } from './multi-types.js';
import { checkDim } from './types.js';

export const TRUSS_S_MAX = 1e5;
export const TRUSS_S_MIN = (8000 * Math.sqrt(10)) / 3;
const S_B = 4000 * Math.sqrt(5);
const A_MAX = 0.01;

function volumeAndStress(x: readonly number[]): [number, number] {
  const [x1, x2, y] = x;
  const v = x1 * Math.sqrt(16 + y * y) + x2 * Math.sqrt(1 + y * y);
  const sAC = (20 * Math.sqrt(16 + y * y)) / (y * x1);
  const sBC = (80 * Math.sqrt(1 + y * y)) / (y * x2);
  return [v, Math.max(sAC, sBC)];
}

/** The Pareto-optimal design of stress S ∈ [S_min, S_max]. */
export function trussOptimalDesign(S: number): number[] {
  const y = S >= S_B ? 2 : Math.min(3, 1 / Math.sqrt((S / 8000) ** 2 - 1));
  const x2 = S >= S_B ? (80 * Math.sqrt(1 + y * y)) / (y * S) : A_MAX;
  return [(20 * Math.sqrt(16 + y * y)) / (y * S), x2, y];
}

/** V*(S): the least volume of a design whose stress is at most S (S ≥ S_min). */
export function trussFrontVolume(S: number): number {
  const s = Math.min(S, TRUSS_S_MAX);
  if (s >= S_B) return 400 / s;
  const y = Math.min(3, 1 / Math.sqrt((s / 8000) ** 2 - 1));
  return (100 * (4 / y + y)) / s;
}

function makeTruss(d: number): MultiBenchmark {
  if (d !== 3) throw new RangeError(`truss2d has dimension 3, got ${d}`);
  const nadir = [trussFrontVolume(TRUSS_S_MIN), TRUSS_S_MAX];
  const ref = [0.06, 1.1e5];
  const stresses = (n: number): number[] => grid(n).map((t) => TRUSS_S_MIN + t * (TRUSS_S_MAX - TRUSS_S_MIN));
  return {
    name: 'truss2d',
    dim: 3,
    objectives: 2,
    constraints: 1,
    evaluate(x) {
      checkDim('truss2d', x, 3);
      const [v, s] = volumeAndStress(x);
      return { f: [v, s], c: [s - TRUSS_S_MAX] };
    },
    bounds: { lower: [0, 0, 1], upper: [A_MAX, A_MAX, 3] },
    referencePoint: ref,
    frontHypervolume(r = ref) {
      checkReference('truss2d', r, nadir);
      const integral = 100 * (2 / 3 - 3 * Math.atan(1 / 7)) + 400 * Math.log(TRUSS_S_MAX / S_B) + 0.004 * (r[1] - TRUSS_S_MAX);
      return r[0] * (r[1] - TRUSS_S_MIN) - integral;
    },
    front: (n) => stresses(n).map((S) => [trussFrontVolume(S), S]),
    paretoSet: (n) => stresses(n).map(trussOptimalDesign),
    source: 'Deb (2001), Multi-Objective Optimization Using Evolutionary Algorithms; Chafekar, Xuan & Rasheed (2003), GECCO; constants as pymoo Truss2D; the front and its HV derived in src/engine/benchmarks/truss.ts',
  };
}

export const TRUSS2D: MultiBenchmarkDef = {
  name: 'truss2d',
  minDim: 3,
  defaultDim: 3,
  defaultObjectives: 2,
  variableObjectives: false,
  make: (d: number) => makeTruss(d),
};
