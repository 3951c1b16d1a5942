/**
 * DTLZ2: K. Deb, L. Thiele, M. Laumanns, E. Zitzler, "Scalable test problems for evolutionary
 * multiobjective optimization", in Evolutionary Multiobjective Optimization (Springer, 2005)
 * (first as "Scalable multi-objective optimization test problems", CEC 2002).
 *
 * M objectives, x ∈ [0, 1]^d with d ≥ M (the paper's d = M + k − 1, k = 10); x_M = (x_M, …, x_d) and
 * g = Σ_{x_i ∈ x_M} (x_i − 0.5)²; with θ_i = x_i π/2,
 *   f_1 = (1 + g) cos θ_1 ⋯ cos θ_{M−2} cos θ_{M−1},
 *   f_2 = (1 + g) cos θ_1 ⋯ cos θ_{M−2} sin θ_{M−1},  …,
 *   f_M = (1 + g) sin θ_1.
 * The Pareto set is x_i = 0.5 for i ≥ M (g = 0): the front is the part of the unit sphere
 * Σ f_i² = 1 with f ≥ 0, nadir (1, …, 1).
 *
 * Hypervolume for r ≥ (1, …, 1): a point of the orthant outside the unit ball is dominated by its
 * projection F/‖F‖ onto the front, and a point inside is dominated by none, so
 * HV(r) = Π r_i − V_M / 2^M, with V_M = π^{M/2}/Γ(M/2 + 1) the volume of the unit M-ball
 * (1 − π/4 at M = 2 and 1 − π/6 at M = 3 for r = (1, …, 1)).
 */
import { checkReference, grid, type MultiBenchmark, type MultiBenchmarkDef } from './multi-types.js';
import { checkDim, cube } from './types.js';

/** Γ(M/2 + 1) for an integer M ≥ 0, from Γ(1) = 1, Γ(1/2) = √π and Γ(x + 1) = x Γ(x). */
function gammaHalfPlusOne(M: number): number {
  let x = M % 2 === 0 ? 1 : 0.5;
  let g = M % 2 === 0 ? 1 : Math.sqrt(Math.PI);
  while (x < M / 2 + 1) {
    g *= x;
    x += 1;
  }
  return g;
}

/** The volume of the part of the unit M-ball in the positive orthant. */
export function orthantBallVolume(M: number): number {
  return Math.PI ** (M / 2) / gammaHalfPlusOne(M) / 2 ** M;
}

function objectives(x: readonly number[], M: number): number[] {
  let g = 0;
  for (let i = M - 1; i < x.length; i++) g += (x[i] - 0.5) ** 2;
  const f = new Array<number>(M);
  for (let j = 0; j < M; j++) {
    // f_{j+1} = (1 + g) Π_{i < M−1−j} cos θ_i · (j > 0 ? sin θ_{M−1−j} : 1)
    let v = 1 + g;
    for (let i = 0; i < M - 1 - j; i++) v *= Math.cos((x[i] * Math.PI) / 2);
    if (j > 0) v *= Math.sin((x[M - 1 - j] * Math.PI) / 2);
    f[j] = v;
  }
  return f;
}

/** A grid of about n points in [0, 1]^{M−1} (the first M − 1 coordinates of the Pareto set). */
function angleGrid(n: number, M: number): number[][] {
  const per = grid(Math.ceil(Math.max(2, n) ** (1 / (M - 1))));
  let out: number[][] = [[]];
  for (let i = 0; i < M - 1; i++) out = out.flatMap((p) => per.map((t) => [...p, t]));
  return out;
}

function makeDtlz2(d: number, M: number): MultiBenchmark {
  if (!(Number.isInteger(M) && M >= 2)) throw new RangeError(`dtlz2 needs an integer number of objectives ≥ 2, got ${M}`);
  if (!(Number.isInteger(d) && d >= M)) throw new RangeError(`dtlz2 with ${M} objectives needs an integer dimension ≥ ${M}, got ${d}`);
  const ones = Array<number>(M).fill(1);
  const ref = Array<number>(M).fill(1.1);
  const paretoSet = (n: number): number[][] => angleGrid(n, M).map((u) => [...u, ...Array<number>(d - M + 1).fill(0.5)]);
  return {
    name: 'dtlz2',
    dim: d,
    objectives: M,
    constraints: 0,
    evaluate(x) {
      checkDim('dtlz2', x, d);
      return { f: objectives(x, M), c: [] };
    },
    bounds: cube(d, 0, 1),
    referencePoint: ref,
    frontHypervolume(r = ref) {
      checkReference('dtlz2', r, ones);
      return r.reduce((a, b) => a * b, 1) - orthantBallVolume(M);
    },
    front: (n) => paretoSet(n).map((x) => objectives(x, M)),
    paretoSet,
    source: 'Deb, Thiele, Laumanns & Zitzler (2005), Evolutionary Multiobjective Optimization; the HV of the front derived in src/engine/benchmarks/dtlz.ts',
  };
}

export const DTLZ2: MultiBenchmarkDef = {
  name: 'dtlz2',
  minDim: 2,
  defaultDim: 11,
  defaultObjectives: 2,
  variableObjectives: true,
  make: (d: number, M = 2) => makeDtlz2(d, M),
};
