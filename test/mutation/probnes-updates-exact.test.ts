/**
 * The ProbNES distribution updates (src/engine/strategies/probnes-updates.ts, ALGORITHM.md §4) at a
 * learning rate other than ½ and 1 (where 2η_Σ = 1 and 2η_Σ = 2/η_Σ hide a wrong factor), on
 * one- and two-dimensional cases worked out by hand; every overflow refused with its error; and the
 * active set with quantile 1 (probnes-data.ts: every point inside).
 */
import { describe, expect, it } from 'vitest';
import { updateCovCmaes, updateCovSnes, updateCovXnes, updateMean } from '../../src/engine/strategies/probnes-updates.js';
import { activeSet } from '../../src/engine/strategies/probnes-data.js';
import { meanStep } from '../../src/engine/strategies/probnes-step.js';
import { NonFiniteError } from '../../src/engine/errors.js';
import { expectMatrixClose as close } from '../helpers/numeric.js';


describe('the updates at η_Σ = 0.3', () => {
  it('Prob-XNES: Σ′ = A expm(2η_Σ AᵀGA) Aᵀ; on diag(1, 4) with G = diag(½, ¼), diag(e^0.3, 4e^0.6)', () => {
    close(updateCovXnes([[1, 0], [0, 4]], [[0.5, 0], [0, 0.25]], 0.3), [[Math.exp(0.3), 0], [0, 4 * Math.exp(0.6)]]);
  });

  it('Prob-SNES natural form: σ²′ = σ² exp(2η_Σ σ² G); reference form σ² exp(η_Σ σ⁴ G)', () => {
    close(updateCovSnes([[2, 0], [0, 1]], [[0.5, 9], [9, -1]], 0.3, 'natural'), [[2 * Math.exp(0.6), 0], [0, Math.exp(-0.6)]]);
    close(updateCovSnes([[2, 0], [0, 1]], [[0.5, 9], [9, -1]], 0.3, 'reference'), [[2 * Math.exp(0.6), 0], [0, Math.exp(-0.3)]]);
  });

  it('Prob-CMAES: Σ′ = Σ + 2η_Σ ΣGΣ', () => {
    close(updateCovCmaes([[1, 0], [0, 4]], [[0.5, 0.1], [0.1, 0.25]], 0.3), [[1 + 0.6 * 0.5, 0.6 * 0.4], [0.6 * 0.4, 4 + 0.6 * 4]]);
  });
});

describe('floors', () => {
  it('Prob-SNES: a variance that underflows is floored at 1e-12 times the largest', () => {
    expect(updateCovSnes([[4, 0], [0, 1]], [[0, 0], [0, -1e6]], 0.5, 'natural')).toEqual([[4, 0], [0, 4e-12]]);
  });

  it('Prob-XNES: a result that is not positive definite (an eigenvalue underflowed to 0) has its eigenvalues floored at 1e-12 times the largest', () => {
    const out = updateCovXnes([[1, 0], [0, 1]], [[0, 0], [0, -1000]], 0.5);
    close(out, [[1, 0], [0, 1e-12]]);
    expect(out[1]![1]!).toBeGreaterThan(0);
  });
});

describe('overflow is an error, never a non-finite distribution', () => {
  it.each<[string, () => unknown, string]>([
    ['the mean (one coordinate of two)', () => updateMean([0, 0], [[1e308, 0], [0, 1]], [10, 1], 1), 'ProbNES mean update produced a non-finite mean'],
    ['the natural mean step (one coordinate of two)', () => meanStep('natural', [0, 0], [[1e308, 0], [0, 1]], [10, 1], null, 1, 2), 'ProbNES mean step produced a non-finite mean'],
    ['the CMA step ΣGΣ', () => updateCovCmaes([[1e200]], [[1e200]], 0.5), 'Prob-CMAES covariance step is not finite'],
    ['the CMA sum Σ + 2η_Σ ΣGΣ (ΣGΣ ≈ 4e307, finite)', () => updateCovCmaes([[1.5e308]], [[1.78e-309]], 0.5), 'Prob-CMAES covariance update overflowed'],
    ['the XNES product A E Aᵀ (E itself finite)', () => updateCovXnes([[1e200]], [[2.5e-198]], 0.5), 'Prob-XNES covariance update overflowed'],
    ['one SNES variance of two', () => updateCovSnes([[1, 0], [0, 1]], [[1000, 0], [0, 0]], 0.5, 'natural'), 'Prob-SNES variance update overflowed'],
  ])('%s', (_, run, message) => {
    expect(run).toThrow(NonFiniteError);
    expect(run).toThrow(message);
  });
});

describe('the active set', () => {
  it('quantile 1 (its χ² quantile is +∞): every point inside, however far', () => {
    const history = [[0, 0], [100, 0], [0, 1e6]].map((x) => ({ x, y: 0 }));
    expect(activeSet(history, [0, 0], [[1, 0], [0, 1]], { enabled: true, quantile: 1, minSize: 1 })).toEqual([0, 1, 2]);
  });
});
