/**
 * The ProbNES natural-gradient updates (ALGORITHM.md §4) on small hand-worked cases. Each
 * expected number is worked out in the comment next to it (numpy cross-checks for the 2×2 ones).
 */
import { describe, expect, it } from 'vitest';
import { NonFiniteError } from '../../src/engine/errors.js';
import { updateCovCmaes, updateCovSnes, updateCovXnes, updateMean } from '../../src/engine/strategies/probnes-updates.js';
import { expectMatrixClose } from '../helpers/numeric.js';

describe('mean update μ\' = μ + η_μ Σ g_μ', () => {
  it('d = 1: μ = 0.3, Σ = 2, g_μ = 0.5, η_μ = 1 → 0.3 + 2·0.5 = 1.3', () => {
    expect(updateMean([0.3], [[2]], [0.5], 1)[0]).toBeCloseTo(1.3, 14);
  });
  it('d = 2: μ = (1, −1), Σ = [[2, .5], [.5, 1]], g_μ = (1, −2), η_μ = .5 → μ + .5·(1, 1.5 − 2)', () => {
    // Σ g_μ = (2·1 + .5·(−2), .5·1 + 1·(−2)) = (1, −1.5); half of it: (.5, −.75).
    const m = updateMean([1, -1], [[2, 0.5], [0.5, 1]], [1, -2], 0.5);
    expect(m[0]).toBeCloseTo(1.5, 14);
    expect(m[1]).toBeCloseTo(-1.75, 14);
  });
});

describe('Prob-CMAES Σ\' = Σ + 2η_Σ Σ G Σ', () => {
  it('d = 1: Σ = 2, G = 0.1, η_Σ = ½ → 2 + 2·½·2·0.1·2 = 2.4', () => {
    expectMatrixClose(updateCovCmaes([[2]], [[0.1]], 0.5), [[2.4]], 14);
  });
  it('d = 2: Σ = [[2, .5], [.5, 1]], G = [[.1, −.05], [−.05, .2]], η_Σ = ½', () => {
    // Σ G Σ = [[.35, .0875], [.0875, .175]] (numpy), so Σ' = Σ + Σ G Σ.
    expectMatrixClose(updateCovCmaes([[2, 0.5], [0.5, 1]], [[0.1, -0.05], [-0.05, 0.2]], 0.5), [[2.35, 0.5875], [0.5875, 1.175]], 12);
  });
  it('halves the step until positive definite: Σ = 1, G = −2, η_Σ = ½ → 1 − 2 (no), 1 − 1 = 0 (no), 1 − ½', () => {
    expectMatrixClose(updateCovCmaes([[1]], [[-2]], 0.5), [[0.5]], 14);
  });
  it('floors the eigenvalues after 5 failed halvings: Σ = I, G = diag(−100, .1)', () => {
    // Last candidate (step ×1/32): diag(1 − 100/32, 1 + .1/32) = diag(−2.125, 1.003125);
    // floor at 1e-12·λ_max → diag(1.003125e-12, 1.003125).
    const out = updateCovCmaes([[1, 0], [0, 1]], [[-100, 0], [0, 0.1]], 0.5);
    expect(out[1][1]).toBeCloseTo(1.003125, 12);
    expect(out[0][0]).toBeCloseTo(1.003125e-12, 22);
    expect(Math.abs(out[0][1])).toBeLessThan(1e-15);
  });
  it('throws a typed error instead of writing Infinity', () => {
    expect(() => updateCovCmaes([[1e200]], [[1e200]], 0.5)).toThrow(NonFiniteError);
  });
});

describe('Prob-XNES Σ\' = A expm(2η_Σ Aᵀ G A) Aᵀ, A = chol(current Σ)', () => {
  it('d = 1: Σ = 2, G = .1, η_Σ = ½ → 2·exp(2·½·2·.1) = 2e^{0.2}', () => {
    expectMatrixClose(updateCovXnes([[2]], [[0.1]], 0.5), [[2 * Math.exp(0.2)]], 13);
  });
  it('d = 2: Σ = [[4, 2], [2, 2]] (A = [[2, 0], [1, 1]]), G = [[.1, −.05], [−.05, .2]], η_Σ = ½', () => {
    // numpy: A @ expm(A.T @ G @ A) @ A.T = [[5.99526477, 3.26850495], [3.26850495, 2.99763238]].
    // (It equals expm(2η Σ G) Σ, independent of the factor, provided A Aᵀ is the CURRENT Σ.)
    const out = updateCovXnes([[4, 2], [2, 2]], [[0.1, -0.05], [-0.05, 0.2]], 0.5);
    expectMatrixClose(out, [[5.99526477, 3.26850495], [3.26850495, 2.99763238]], 7);
  });
  it('overflow in expm is a typed error', () => {
    expect(() => updateCovXnes([[1]], [[1e4]], 0.5)).toThrow(NonFiniteError);
  });
});

describe('Prob-SNES (diagonal)', () => {
  it('reference form Σ_ii·exp(η Σ_ii² G_ii): Σ = diag(3, .5), G = diag(.1, −2), η = 1', () => {
    // 3·exp(9·.1) = 3e^{0.9}; .5·exp(.25·(−2)) = .5e^{−0.5}; off-diagonal G ignored.
    const out = updateCovSnes([[3, 0], [0, 0.5]], [[0.1, 7], [7, -2]], 1, 'reference');
    expectMatrixClose(out, [[3 * Math.exp(0.9), 0], [0, 0.5 * Math.exp(-0.5)]], 13);
  });
  it('natural form Σ_ii·exp(2η Σ_ii G_ii): same inputs → 3e^{0.6}, .5e^{−2}', () => {
    const out = updateCovSnes([[3, 0], [0, 0.5]], [[0.1, 7], [7, -2]], 1, 'natural');
    expectMatrixClose(out, [[3 * Math.exp(0.6), 0], [0, 0.5 * Math.exp(-2)]], 13);
  });
  it('overflow is a typed error', () => {
    expect(() => updateCovSnes([[10]], [[1e3]], 1, 'reference')).toThrow(NonFiniteError);
  });
});
