/**
 * The default profile's mean step (strategies/probnes-step.ts; docs/ALGORITHM.md §18). Expected
 * values by construction: on m(u) = bᵀ(u − c) + (u − c)ᵀA(u − c) with A negative definite the maximiser
 * is c − ½A⁻¹b, the gradient at μ = c is b, so the Newton step from c must land on it exactly.
 */
import { describe, expect, it } from 'vitest';
import { limitCovGradient, meanStep, stepInBounds } from '../../src/engine/strategies/probnes-step.js';
import { clampToBounds, limitCovToBounds } from '../../src/engine/strategies/bounds.js';

const A = [[-2, 0.5], [0.5, -1]];
const b = [1, -0.5];
// −½A⁻¹b: A⁻¹ = (1/det)[[−1, −0.5], [−0.5, −2]], det = 2 − 0.25 = 1.75
const Ainv = [[-1 / 1.75, -0.5 / 1.75], [-0.5 / 1.75, -2 / 1.75]];
const optimum = [0, 1].map((i) => -0.5 * (Ainv[i][0] * b[0] + Ainv[i][1] * b[1]));

describe('mean step', () => {
  it('newton lands on the maximiser of a concave quadratic when it lies inside the trust region', () => {
    const mu = meanStep('newton', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10);
    mu.forEach((v, i) => expect(v).toBeCloseTo(optimum[i], 12));
  });

  it('the step is scaled down to Mahalanobis length ρ under Σ, keeping its direction', () => {
    const cov = [[0.01, 0], [0, 0.04]];
    const mu = meanStep('newton', [0, 0], cov, b, A, 1, 2);
    const maha = Math.hypot(mu[0] / 0.1, mu[1] / 0.2);
    expect(maha).toBeCloseTo(2, 10);
    expect(mu[0] / mu[1]).toBeCloseTo(optimum[0] / optimum[1], 10);
  });

  it('line: the maximiser of the quadratic along Σ g (t = −gᵀs / 2sᵀAs)', () => {
    const mu = meanStep('line', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10);
    const s = b, gs = b[0] * s[0] + b[1] * s[1];
    const sAs = s[0] * (A[0][0] * s[0] + A[0][1] * s[1]) + s[1] * (A[1][0] * s[0] + A[1][1] * s[1]);
    const t = -gs / (2 * sAs);
    expect(mu[0]).toBeCloseTo(t * s[0], 12);
    expect(mu[1]).toBeCloseTo(t * s[1], 12);
  });

  it('A not negative definite, or no quadratic: the natural step η Σ g (clipped only when there is a model)', () => {
    const cov = [[2, 0], [0, 1]];
    const indefinite = [[-1, 0], [0, 1]];
    expect(meanStep('newton', [1, 1], cov, [0.1, 0.2], indefinite, 1, 10)).toEqual([1.2, 1.2]);
    expect(meanStep('newton', [1, 1], cov, [0.1, 0.2], null, 0.5, 10)).toEqual([1.1, 1.1]);
    expect(meanStep('natural', [0, 0], cov, [10, 0], A, 1, 1)).toEqual([20, 0]);
  });

  it('cauchy: the line step where the model is concave along Σg, else Σg scaled to Mahalanobis length ρ', () => {
    // Concave along s = Σ g (here Σ = I): the line step's maximiser, inside the region.
    expect(meanStep('cauchy', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10)).toEqual(meanStep('line', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10));
    // A = 0 (a linear mean) or convex along s: on the boundary, ‖L⁻¹δ‖ = ρ, along s = Σ g = (0.8, 0.2).
    const cov = [[4, 0], [0, 1]];
    for (const M of [[[0, 0], [0, 0]], [[1, 0], [0, 3]]]) {
      const mu = meanStep('cauchy', [1, -1], cov, [0.2, 0.2], M, 1, 1.5);
      const delta = [mu[0] - 1, mu[1] + 1];
      expect(Math.hypot(delta[0] / 2, delta[1])).toBeCloseTo(1.5, 12);
      expect(delta[0] / delta[1]).toBeCloseTo(0.8 / 0.2, 12);
    }
  });

  it('newton-cauchy: the Newton step where A is negative definite, the Cauchy point where it is not', () => {
    expect(meanStep('newton-cauchy', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10)).toEqual(meanStep('newton', [0, 0], [[1, 0], [0, 1]], b, A, 1, 10));
    const cov = [[4, 0], [0, 1]];
    const indefinite = [[-1, 0], [0, 1]];
    expect(meanStep('newton-cauchy', [1, -1], cov, [0.2, 0.2], indefinite, 1, 1.5)).toEqual(meanStep('cauchy', [1, -1], cov, [0.2, 0.2], indefinite, 1, 1.5));
    // …where Newton would fall back to the (shorter) natural step.
    expect(meanStep('newton', [1, -1], cov, [0.2, 0.2], indefinite, 1, 1.5)).toEqual([1.8, -0.8]);
  });
});

describe('covariance step limit', () => {
  it('scales G so that the whitened step 2η LᵀGL has spectral radius κ, and leaves a small step alone', () => {
    const cov = [[4, 1], [1, 2]];
    const G = [[30, -5], [-5, 10]];
    const out = limitCovGradient(cov, G, 1, 3);
    // LᵀGL has the eigenvalues of GΣ (similar matrices): ρ(2·G'Σ) must be 3.
    const GS = [0, 1].map((i) => [0, 1].map((j) => 2 * (out[i][0] * cov[0][j] + out[i][1] * cov[1][j])));
    const tr = GS[0][0] + GS[1][1], det = GS[0][0] * GS[1][1] - GS[0][1] * GS[1][0];
    const disc = Math.sqrt(tr * tr / 4 - det);
    expect(Math.max(Math.abs(tr / 2 + disc), Math.abs(tr / 2 - disc))).toBeCloseTo(3, 10);
    expect(out[0][1] / out[0][0]).toBeCloseTo(G[0][1] / G[0][0], 12);
    const small = [[0.01, 0], [0, 0.02]];
    expect(limitCovGradient(cov, small, 1, 3)).toBe(small);
  });
});

describe('mean bounds', () => {
  it('projects each coordinate onto [lower, upper]; null is no bound on that side', () => {
    const bounds = { lower: [-1, null, 0], upper: [1, 2, null] };
    expect(clampToBounds([3, -50, -0.5], bounds)).toEqual([1, -50, 0]);
    expect(clampToBounds([-3, 5, 7], bounds)).toEqual([-1, 2, 7]);
    expect(clampToBounds([0.25, 1.5, 0.5], bounds)).toEqual([0.25, 1.5, 0.5]);
  });
});

describe('covariance limited to the bounds', () => {
  it('scales each too-wide marginal to the width, keeps correlations and positive definiteness', () => {
    // Widths: 2 (x₀), ∞ (x₁ unbounded above), 4 (x₂). Σ₀₀ = 16 (σ 4 > 2: scaled by D₀₀ = 2/4 = 0.5),
    // Σ₁₁ = 100 (unbounded: kept), Σ₂₂ = 9 (σ 3 ≤ 4: kept). Hand-computed Σ' = DΣD, D = diag(0.5, 1, 1).
    const bounds = { lower: [-1, 0, -2], upper: [1, null, 2] };
    const cov = [
      [16, 12, 6],
      [12, 100, 3],
      [6, 3, 9],
    ];
    const out = limitCovToBounds(cov, bounds);
    expect(out).toEqual([
      [4, 6, 3],
      [6, 100, 3],
      [3, 3, 9],
    ]);
    const corr = (m: number[][], i: number, j: number) => m[i][j] / Math.sqrt(m[i][i] * m[j][j]);
    for (const [i, j] of [[0, 1], [0, 2], [1, 2]]) expect(corr(out, i, j)).toBeCloseTo(corr(cov, i, j), 12);
    // Untouched when every marginal fits: the same object back.
    const narrow = [[0.5, 0.1, 0], [0.1, 1, 0], [0, 0, 2]];
    expect(limitCovToBounds(narrow, bounds)).toBe(narrow);
  });
});

describe('mean step inside the bounds', () => {
  // Natural step μ + Σg with Σ = diag(1, 1), g = (3, 0.5): μ₀ sits on its upper bound 1 and is pushed outwards.
  const natural = (m: number[], c: number[][], g: number[]) => m.map((v, i) => v + c[i].reduce((t, cij, j) => t + cij * g[j], 0));
  const bounds = { lower: [-1, -1], upper: [1, 1] };
  const cov = [[1, 0.5], [0.5, 1]];
  const g = [3, 0.5];

  it('free: a coordinate held on the bound it is pushed against is left out; the rest steps on (μ_F, Σ_FF, g_F)', () => {
    // Held: μ₀ = 1 and s₀ = (Σg)₀ = 3.25 > 0. The free coordinate steps by Σ₁₁ g₁ = 0.5 (not (Σg)₁ = 2).
    expect(stepInBounds(natural, [1, 0], cov, g, null, bounds, true)).toEqual([1, 0.5]);
    // Not free: the full step (3.25, 2) then projected: the free coordinate overshoots to its bound.
    expect(stepInBounds(natural, [1, 0], cov, g, null, bounds, false)).toEqual([1, 1]);
  });

  it('nothing held (interior μ, or the step points inwards): the step of all coordinates, projected', () => {
    expect(stepInBounds(natural, [0, 0], cov, g, null, bounds, true)).toEqual(clampToBounds(natural([0, 0], cov, g), bounds));
    expect(stepInBounds(natural, [1, 0], cov, [-0.3, -0.05], null, bounds, true)).toEqual(natural([1, 0], cov, [-0.3, -0.05]));
    // Every coordinate held: μ stays.
    expect(stepInBounds(natural, [1, 1], cov, g, null, bounds, true)).toEqual([1, 1]);
  });
});
