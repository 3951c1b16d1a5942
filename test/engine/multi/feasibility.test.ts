/**
 * The feasibility model of the batch (src/engine/strategies/feasibility.ts, ALGORITHM.md §32.3–§32.4):
 * PF(u) = Π_k Φ(−m_k(u)/s_k(u)) against cases whose answer is known, the channel of impossible
 * evaluations, the fit set, and determinism.
 */
import { describe, expect, it } from 'vitest';
import { feasibilityModel, type FeasibilityEvaluation } from '../../../src/engine/strategies/feasibility.js';

const I2 = [[1, 0], [0, 1]];

/** A 7×7 grid over [−1.5, 1.5]², step 0.5 (u_1 = 0.5 is one of its lines). */
function grid(): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < 7; i++) for (let j = 0; j < 7; j++) out.push([-1.5 + 0.5 * i, -1.5 + 0.5 * j]);
  return out;
}

describe('PF(u) = Π_k Φ(−m_k(u)/s_k(u))', () => {
  // c(u) = u_1 − 0.5 observed without noise on the grid: the GP interpolates a plane. Where c is
  // observed at −1 or less (u_1 ≤ −0.5) m/s is large and negative, so Φ(−m/s) → 1; at +0.5 or more
  // (u_1 ≥ 1), Φ → 0; on the line u_1 = 0.5 the posterior mean is the observed 0 (up to the fitted
  // noise), so PF = Φ(0) = 1/2 whatever s is (Gardner et al. 2014: PF is the posterior mass below 0).
  const evaluations: FeasibilityEvaluation[] = grid().map((x) => ({ x, c: [x[0] - 0.5] }));
  const model = feasibilityModel(evaluations, 1, [0, 0], I2);

  it('is near 1 far on the feasible side, near 0 far on the infeasible side', () => {
    expect(model.fitted).toBe(1);
    for (const u2 of [-1.25, 0, 0.75]) {
      for (const u1 of [-1.5, -1, -0.5]) expect(model.pf([u1, u2])).toBeGreaterThan(0.99);
      for (const u1 of [1, 1.5]) expect(model.pf([u1, u2])).toBeLessThan(0.01);
    }
  });

  it('is about 1/2 on the boundary c = 0, and falls across it', () => {
    for (const u2 of [-1.25, 0, 0.25, 1]) expect(Math.abs(model.pf([0.5, u2]) - 0.5)).toBeLessThan(0.1);
    const across = [0, 0.25, 0.5, 0.75, 1].map((u1) => model.pf([u1, 0.1]));
    for (let i = 1; i < across.length; i++) expect(across[i]).toBeLessThanOrEqual(across[i - 1]);
    expect(across[0] - across[4]).toBeGreaterThan(0.99);
  });

  it('does not depend on the constraint\'s units', () => {
    // Φ(−a·m/(a·s)) = Φ(−m/s) for a > 0, and the standardisation hands the GP the same targets for a·c
    // as for c: PF of 100·c equals PF of c (the standard deviation must scale back m and s alike).
    const scaled = feasibilityModel(grid().map((x) => ({ x, c: [100 * (x[0] - 0.5)] })), 1, [0, 0], I2);
    for (const u of [[0.3, 0.1], [0.5, -0.4], [0.7, 1.1], [0.6, 0]]) expect(scaled.pf(u)).toBeCloseTo(model.pf(u), 9);
    // One of them where PF is neither 0 nor 1, so that a wrong scale of s alone would show.
    expect(Math.abs(scaled.pf([0.5, -0.4]) - 0.5)).toBeLessThan(0.3);
  });

  it('multiplies the channels\' probabilities', () => {
    // c_2 = u_2 − 0.5 as well: PF = PF_1 · PF_2, about 1/4 at the corner (0.5, 0.5), ~0 where either is violated.
    const two = feasibilityModel(grid().map((x) => ({ x, c: [x[0] - 0.5, x[1] - 0.5] })), 2, [0, 0], I2);
    expect(two.fitted).toBe(2);
    expect(two.pf([-1, -1])).toBeGreaterThan(0.98);
    expect(Math.abs(two.pf([0.5, 0.5]) - 0.25)).toBeLessThan(0.1);
    expect(two.pf([-1, 1.5])).toBeLessThan(0.01);
    expect(two.pf([1.5, -1])).toBeLessThan(0.01);
  });

  it('fits no GP for a channel without violation (PF = 1) and gives PF = 0 for one violated alike everywhere', () => {
    const none = feasibilityModel(grid().map((x) => ({ x, c: [x[0] - 2] })), 1, [0, 0], I2);
    expect(none.fitted).toBe(0);
    expect(none.pf([5, 5])).toBe(1);
    const always = feasibilityModel(grid().map((x) => ({ x, c: [3] })), 1, [0, 0], I2);
    expect(always.fitted).toBe(0);
    expect(always.pf([-1, -1])).toBe(0);
  });
});

describe('impossible evaluations (§32.4 "as a constraint")', () => {
  // No value exists where u_1 > 0.5: labels +1 there, −1 at every evaluated point, and the least-squares
  // classifier's latent mean crosses 0 between the lines u_1 = 0.5 and 1.
  const evaluations: FeasibilityEvaluation[] = grid().map((x) => (x[0] > 0.5 ? { x, infeasible: true as const } : { x, c: [] }));
  const model = feasibilityModel(evaluations, 0, [0, 0], I2);

  it('makes the region of crashes inadmissible and keeps the rest', () => {
    expect(model.fitted).toBe(1);
    for (const u2 of [-1, 0, 1.25]) {
      expect(model.pf([1.5, u2])).toBeLessThan(0.05);
      expect(model.pf([1, u2])).toBeLessThan(0.05);
      expect(model.pf([-1, u2])).toBeGreaterThan(0.95);
      expect(model.pf([0, u2])).toBeGreaterThan(0.9);
    }
  });

  it('adds nothing when every evaluation succeeded', () => {
    expect(feasibilityModel(grid().map((x) => ({ x })), 0, [0, 0], I2).fitted).toBe(0);
  });
});

describe('the fit set: the evaluations nearest ν\'s mean under its Σ', () => {
  // Σ = diag(100, 0.01): points 5 apart along u_1 are near ν (squared distance 0.25), points 0.5 apart
  // along u_2 far (25). The violations lie along u_2 only.
  const cov = [[100, 0], [0, 0.01]];
  const evaluations: FeasibilityEvaluation[] = [
    ...[-10, -5, 0, 5, 10].map((a) => ({ x: [a, 0], c: [-1] })),
    ...[0.5, 1, 1.5].map((b) => ({ x: [0, b], c: [1] })),
  ];

  it('keeps the nearest by Mahalanobis distance, not Euclidean', () => {
    // The 5 nearest are the feasible row: no violation among them, PF = 1 (Euclidean would take the violators).
    const near = feasibilityModel(evaluations, 1, [0, 0], cov, 5);
    expect(near.fitted).toBe(0);
    expect(near.pf([0, 1])).toBe(1);
    // All 8: the violations are seen.
    const all = feasibilityModel(evaluations, 1, [0, 0], cov);
    expect(all.fitted).toBe(1);
    expect(all.pf([0, 1.5])).toBeLessThan(0.05);
  });
});

describe('determinism', () => {
  it('the same evaluations and ν give the same PF, bit for bit', () => {
    const evaluations: FeasibilityEvaluation[] = grid().map((x) => (x[1] > 1 ? { x, infeasible: true as const } : { x, c: [x[0] * x[1] - 0.3] }));
    const a = feasibilityModel(evaluations, 1, [0.2, -0.1], [[1, 0.3], [0.3, 2]]);
    const b = feasibilityModel(structuredClone(evaluations), 1, [0.2, -0.1], [[1, 0.3], [0.3, 2]]);
    expect(a.fitted).toBe(2);
    const at = [[0, 0], [0.7, 0.7], [-1.2, 1.3], [1.4, -0.2]];
    expect(at.map((u) => a.pf(u))).toEqual(at.map((u) => b.pf(u)));
  });
});
