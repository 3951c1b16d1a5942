/**
 * Dominance, non-dominated sorting, crowding distance and constraint-domination. Expected fronts and
 * distances are worked by hand from the definitions of Deb et al. (2002, NSGA-II Sec. III-A/B and its constrained-domination) and
 * Deb (2000); the fast sort is also checked against the definition applied literally (peel off the
 * points no remaining point dominates) on seeded random sets with many ties.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/engine/errors.js';
import {
  constrainedDominates,
  constrainedNonDominatedSort,
  crowdingDistance,
  dominates,
  feasibleNonDominated,
  isFeasible,
  nonDominated,
  nonDominatedSort,
  totalViolation,
} from '../../../src/engine/multi/pareto.js';
import { Rng } from '../../../src/engine/random/index.js';

/** The fronts by the definition: repeatedly take the points that no remaining point dominates. */
function peel(points: number[][], dom: (a: number, b: number) => boolean): number[][] {
  let left = points.map((_, i) => i);
  const fronts: number[][] = [];
  while (left.length > 0) {
    const front = left.filter((i) => !left.some((j) => dom(j, i)));
    if (front.length === 0) throw new Error('not a strict partial order: every remaining point is dominated');
    fronts.push(front);
    left = left.filter((i) => !front.includes(i));
  }
  return fronts;
}

/** n points with m integer objectives in 0…levels − 1 (ties and duplicates are common). */
function randomPoints(rng: Rng, n: number, m: number, levels: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: m }, () => rng.int(levels)));
}

describe('dominance (minimisation)', () => {
  it('needs no worse in every objective and better in one', () => {
    expect(dominates([1, 2], [2, 3])).toBe(true);
    expect(dominates([1, 3], [2, 3])).toBe(true);
    expect(dominates([2, 3], [1, 2])).toBe(false);
    expect(dominates([1, 3], [2, 2])).toBe(false);
    expect(dominates([1, 2], [1, 2])).toBe(false); // equal points do not dominate one another
    expect(dominates([0, 0, 1], [0, 0, 2])).toBe(true);
  });
});

describe('fast non-dominated sort', () => {
  it('layers a set worked by hand', () => {
    //   front 1: (1,4) (2,2) (4,1) and the duplicate (2,2); front 2: (2,4) (3,3) (4,2); front 3: (4,4)
    const pts = [[3, 3], [1, 4], [4, 4], [2, 2], [4, 1], [2, 4], [4, 2], [2, 2]];
    expect(nonDominatedSort(pts)).toEqual([[1, 3, 4, 7], [0, 5, 6], [2]]);
    expect(nonDominated(pts)).toEqual([1, 3, 4, 7]);
  });

  it('agrees with the definition on seeded random sets with ties (m = 2, 3, 4)', () => {
    const rng = Rng.fromSeed(11);
    for (let trial = 0; trial < 60; trial++) {
      const m = 2 + (trial % 3);
      const pts = randomPoints(rng, 5 + rng.int(40), m, 6);
      const expected = peel(pts, (a, b) => dominates(pts[a], pts[b]));
      expect(nonDominatedSort(pts)).toEqual(expected);
      expect(nonDominated(pts)).toEqual(expected[0]);
    }
  });

  it('handles the empty set and one point, and refuses non-finite or ragged input', () => {
    expect(nonDominatedSort([])).toEqual([]);
    expect(nonDominated([[5, 5]])).toEqual([0]);
    expect(() => nonDominatedSort([[1, Number.NaN]])).toThrow(InvalidInputError);
    expect(() => nonDominated([[1, 2], [1]])).toThrow(InvalidInputError);
    expect(() => nonDominated([[1, Infinity]])).toThrow(InvalidInputError);
  });
});

describe('crowding distance (Deb et al. 2002, Sec. III-B)', () => {
  it('a front worked by hand', () => {
    // f1 sorted 0,1,3,4 (range 4): (1,2) gets (3−0)/4 = 0.75, (3,1) gets (4−1)/4 = 0.75.
    // f2 sorted 0,1,2,5 (range 5): (3,1) gets (2−0)/5 = 0.4, (1,2) gets (5−1)/5 = 0.8.
    const pts = [[0, 5], [3, 1], [1, 2], [4, 0]];
    const cd = crowdingDistance(pts, [0, 1, 2, 3]);
    expect(cd[0]).toBe(Infinity);
    expect(cd[3]).toBe(Infinity);
    expect(cd[1]).toBeCloseTo(1.15, 14);
    expect(cd[2]).toBeCloseTo(1.55, 14);
  });

  it('an objective without range adds nothing, and a subset front is measured on its own range', () => {
    expect(crowdingDistance([[0, 1], [1, 1], [2, 1]], [0, 1, 2])).toEqual([Infinity, 1, Infinity]);
    // The front {1, 2, 3} of these points: f1 1,2,4 (range 3) → the middle (2,·) gets (4 − 1)/3 = 1;
    // f2 7,5,1 (range 6) → it gets (7 − 1)/6 = 1; point 0 is not in the front and is ignored.
    expect(crowdingDistance([[100, 100], [1, 7], [2, 5], [4, 1]], [1, 2, 3])).toEqual([Infinity, 2, Infinity]);
    expect(crowdingDistance([[1, 2]], [0])).toEqual([0]);
    expect(crowdingDistance([[1, 2], [2, 1]], [0, 1])).toEqual([Infinity, Infinity]);
    expect(() => crowdingDistance([[1, 2]], [1])).toThrow(InvalidInputError);
  });
});

describe('constraints: feasible when every c_j ≤ 0, CV = Σ max(0, c_j) (Deb 2000)', () => {
  it('total violation and feasibility, 0 counting as feasible', () => {
    expect(totalViolation([-1, 2, 0.5])).toBe(2.5);
    expect(totalViolation([])).toBe(0);
    expect(isFeasible([0, -3])).toBe(true);
    expect(isFeasible([0, 1e-12])).toBe(false);
    expect(() => totalViolation([Number.NaN])).toThrow(InvalidInputError);
  });

  it('constraint-domination: feasible first, then the smaller violation, then Pareto', () => {
    expect(constrainedDominates([9, 9], [0], [0, 0], [0.1])).toBe(true); // feasible beats infeasible
    expect(constrainedDominates([0, 0], [0.1], [9, 9], [0])).toBe(false);
    expect(constrainedDominates([9, 9], [0.5, 0.2], [0, 0], [1])).toBe(true); // 0.7 < 1
    expect(constrainedDominates([0, 0], [1], [9, 9], [0.5, 0.5])).toBe(false); // equal violation
    expect(constrainedDominates([1, 1], [-1], [2, 2], [0])).toBe(true); // both feasible: Pareto
    expect(constrainedDominates([1, 3], [-1], [2, 2], [0])).toBe(false);
  });

  it('sorts feasible points by Pareto rank, then infeasible points by violation', () => {
    const f = [[1, 1], [0, 0], [2, 0], [3, 3], [0, 2], [5, 5]];
    const c = [[-1], [0.5], [0], [-2], [2], [0.5]];
    // feasible: 0 (1,1), 2 (2,0), 3 (3,3) → {0, 2} then {3}; infeasible: CV 0.5 {1, 5}, then CV 2 {4}.
    expect(constrainedNonDominatedSort(f, c)).toEqual([[0, 2], [3], [1, 5], [4]]);
    expect(feasibleNonDominated(f, c)).toEqual([0, 2]);
  });

  it('agrees with the definition on seeded random sets; no constraints is plain sorting', () => {
    const rng = Rng.fromSeed(5);
    for (let trial = 0; trial < 40; trial++) {
      const n = 3 + rng.int(30);
      const f = randomPoints(rng, n, 2 + (trial % 2), 5);
      const c = randomPoints(rng, n, 2, 4).map((v) => v.map((x) => x - 2));
      const expected = peel(f, (a, b) => constrainedDominates(f[a], c[a], f[b], c[b]));
      expect(constrainedNonDominatedSort(f, c)).toEqual(expected);
      expect(constrainedNonDominatedSort(f, f.map(() => []))).toEqual(nonDominatedSort(f));
    }
  });

  it('refuses mismatched constraint vectors', () => {
    expect(() => constrainedNonDominatedSort([[1, 2], [2, 1]], [[0]])).toThrow(InvalidInputError);
    expect(() => constrainedNonDominatedSort([[1, 2], [2, 1]], [[0], [0, 1]])).toThrow(InvalidInputError);
    expect(() => feasibleNonDominated([[1, 2]], [])).toThrow(InvalidInputError);
  });
});
