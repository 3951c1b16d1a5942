/**
 * Scalarisations. Evidence: values worked by hand from Knowles (2006)'s augmented Chebyshev formula
 * (ρ = 0.05) and from SMS-EGO's penalty (Ponweiser et al. 2008); the Dirichlet(1, …, 1) marginals
 * (w_1 ~ U(0, 1) at m = 2, Beta(1, 2) at m = 3: P(w_1 ≤ t) = 1 − (1 − t)²) within 4 binomial
 * standard errors; and the property that makes Chebyshev the right choice: the minimiser over a set is
 * Pareto-optimal, and a concave front's middle is reached (a weighted sum only reaches its ends).
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError, NonFiniteError } from '../../../src/engine/errors.js';
import { getMultiBenchmark } from '../../../src/engine/benchmarks/multi.js';
import { hypervolumeImprovement } from '../../../src/engine/multi/hypervolume.js';
import { nonDominated } from '../../../src/engine/multi/pareto.js';
import {
  augmentedChebyshev,
  drawScalarization,
  hviLoss,
  normalise,
  observedRange,
  PAREGO_RHO,
  simplexWeights,
  type Scalarization,
} from '../../../src/engine/multi/scalarize.js';
import { Rng } from '../../../src/engine/random/index.js';

function argmin(values: number[]): number {
  let best = 0;
  values.forEach((v, i) => {
    if (v < values[best]) best = i;
  });
  return best;
}

describe('weights uniform on the simplex', () => {
  it('lie on the simplex and replay from the seed', () => {
    const a = Rng.fromSeed(9);
    const b = Rng.fromSeed(9);
    for (const m of [1, 2, 3, 7]) {
      const w = simplexWeights(a, m);
      expect(w).toEqual(simplexWeights(b, m));
      expect(w).toHaveLength(m);
      expect(w.every((v) => v >= 0)).toBe(true);
      expect(w.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 14);
    }
    expect(() => simplexWeights(a, 0)).toThrow(InvalidInputError);
    expect(() => simplexWeights(a, 1.5)).toThrow(InvalidInputError);
  });

  it('have the Dirichlet(1, …, 1) marginals: U(0, 1) at m = 2, Beta(1, 2) at m = 3 (10⁵ draws, 4 SE)', () => {
    const rng = Rng.fromSeed(1);
    const N = 100_000;
    for (const [m, t, p] of [[2, 0.3, 0.3], [3, 0.5, 0.75], [3, 0.1, 1 - 0.81]] as const) {
      let below = 0;
      for (let k = 0; k < N; k++) if (simplexWeights(rng, m)[0] <= t) below++;
      expect(Math.abs(below / N - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / N));
    }
  });
});

describe('augmented Chebyshev (Knowles 2006)', () => {
  const s: Scalarization = { weights: [0.25, 0.75], lower: [0, 0], upper: [2, 4], rho: PAREGO_RHO };

  it('a value worked by hand', () => {
    // f̄ = (1/2, 1/4); w·f̄ = (0.125, 0.1875); max 0.1875 + 0.05 · 0.3125 = 0.203125.
    expect(augmentedChebyshev(s, [1, 1])).toBeCloseTo(0.203125, 15);
    // f̄ = (1, 0): w·f̄ = (0.25, 0); 0.25 + 0.05 · 0.25 = 0.2625.
    expect(augmentedChebyshev(s, [2, 0])).toBeCloseTo(0.2625, 15);
    expect(normalise({ lower: [1, 3], upper: [1, 5] }, [2, 4])).toEqual([1, 0.5]);
    expect(() => augmentedChebyshev(s, [1, Number.NaN])).toThrow(InvalidInputError);
    expect(() => augmentedChebyshev(s, [1, 2, 3])).toThrow(InvalidInputError);
  });

  it('its minimiser over a set is always Pareto-optimal (seeded random sets and weights)', () => {
    const rng = Rng.fromSeed(14);
    for (let t = 0; t < 200; t++) {
      const m = 2 + (t % 3);
      const pts = Array.from({ length: 25 }, () => Array.from({ length: m }, () => rng.int(6)));
      const scal = drawScalarization(rng, pts);
      const best = argmin(pts.map((p) => augmentedChebyshev(scal, p)));
      expect(nonDominated(pts)).toContain(best);
    }
  });

  it('reaches the middle of a concave front (ZDT2) where a weighted sum reaches only the ends', () => {
    const front = getMultiBenchmark('zdt2', 3).front(101); // f2 = 1 − f1², f1 = 0, 0.01, …, 1
    const { lower, upper } = observedRange(front);
    // Weights ∝ 1/f̄ of the target point (0.5, 0.75) make its two terms equal: it is the minimiser.
    const w = [1 / 0.5, 1 / 0.75];
    const weights = w.map((v) => v / (w[0] + w[1]));
    const cheb = argmin(front.map((p) => augmentedChebyshev({ weights, lower, upper, rho: PAREGO_RHO }, p)));
    expect(front[cheb][0]).toBeCloseTo(0.5, 12);
    const sum = argmin(front.map((p) => weights[0] * p[0] + weights[1] * p[1]));
    expect([0, 1]).toContain(front[sum][0]);
  });

  it('draws its weights from the generator and its range from the observations, as plain JSON', () => {
    const obs = [[1, 10], [3, 4], [2, 8]];
    const a = drawScalarization(Rng.fromSeed(2), obs);
    expect(a).toEqual(drawScalarization(Rng.fromSeed(2), obs));
    expect(a).not.toEqual(drawScalarization(Rng.fromSeed(3), obs));
    expect(JSON.parse(JSON.stringify(a))).toEqual(a);
    expect(a.lower).toEqual([1, 4]);
    expect(a.upper).toEqual([3, 10]);
    expect(a.rho).toBe(0.05);
    expect(() => drawScalarization(Rng.fromSeed(2), [])).toThrow(InvalidInputError);
    expect(() => drawScalarization(Rng.fromSeed(2), obs, -1)).toThrow(InvalidInputError);
  });
});

describe('hypervolume-improvement loss (SMS-EGO)', () => {
  const front = [[1, 1]];
  const r = [3, 3];

  it('−HVI for a point that improves the front', () => {
    // HV{(0.5,0.5),(1,1)} = 2.5² = 6.25, HV{(1,1)} = 4: improvement 2.25.
    expect(hviLoss([0.5, 0.5], front, r)).toBeCloseTo(-2.25, 14);
    expect(hviLoss([0.5, 2], front, r)).toBeCloseTo(-hypervolumeImprovement([0.5, 2], front, r), 14);
  });

  it('the penalty −1 + Π(1 + f_i − p_i) over the dominating front points, growing with the distance', () => {
    expect(hviLoss([2, 1.5], front, r)).toBeCloseTo(-1 + 2 * 1.5, 14);
    expect(hviLoss([1, 1], front, r)).toBe(0);
    // Both (1,1) and (0,2) dominate (2, 2.5) and add their penalties: (2·2.5 − 1) + (3·1.5 − 1) = 7.5.
    expect(hviLoss([2, 2.5], [[1, 1], [0, 2]], r)).toBeCloseTo(-1 + 2 * 2.5 + (-1 + 3 * 1.5), 14);
    expect(hviLoss([2.5, 2.5], front, r)).toBeGreaterThan(hviLoss([2, 2], front, r));
  });

  it('a point past r that nothing dominates pays its distance past r', () => {
    expect(hviLoss([4, 0.5], front, r)).toBeCloseTo(-1 + 2 * 1, 14);
    expect(hviLoss([0.5, 0.5], [], r)).toBeCloseTo(-6.25, 14);
    expect(() => hviLoss([1e300, 1e300], [[0, 0]], r)).toThrow(NonFiniteError);
  });
});
