/**
 * Priors fitted to data (src/domain/studies/prior-fit.ts) and the search distribution read in the
 * parameters' terms (src/domain/studies/distribution.ts), against values derived by hand:
 *
 * - OAS (Chen, Wiesel, Eldar, Hero 2010, eq. (23)) for a rank-one scatter S = c·vvᵀ (|v| = 1):
 *   tr(S) = c and tr(S²) = c², so ρ = ((1 − 2/d)c² + c²) / ((n + 1 − 2/d)(c² − c²/d)) = 2 / (n + 1 − 2/d)
 *   (two points in ten dimensions: 2 / 2.8 = 5/7), clamped at 1; S a multiple of I: ρ = 1.
 * - WS-CMA-ES's promising distribution (Nomura et al. 2021, §4): the top points' mean, and α²I plus
 *   their scatter, in the unit-scaled space.
 * - The distribution: t̄ = m0 + L0μ and C = L0ΣL0ᵀ, computed here with ml-matrix's products.
 */
import { describe, expect, it } from 'vitest';
import { Matrix } from 'ml-matrix';
import { shrunkFit, warmStartFit } from '../../src/domain/studies/prior-fit.js';
import { centrePoint, internalDistribution, priorDistribution, userDistribution } from '../../src/domain/studies/distribution.js';
import { searchSpace } from '../../src/domain/studies/transforms.js';
import type { JsonValue } from '../../src/storage/index.js';
import { expectMatrixClose as close } from '../helpers/numeric.js';


describe('shrunkFit (OAS)', () => {
  it('two points in ten dimensions: ρ = 5/7, the midpoint, ρμI + (1 − ρ)S', () => {
    const a = Array.from({ length: 10 }, (_, j) => j / 10);
    const b = a.map((v, j) => v + (j === 3 ? 2 : j === 7 ? -1 : 0));
    const fit = shrunkFit([a, b], [1, 1], new Array(10).fill(1))!;
    expect(fit.shrinkage).toBeCloseTo(5 / 7, 14);
    fit.mean.forEach((m, j) => expect(m).toBeCloseTo((a[j]! + b[j]!) / 2, 14));
    // S = ¼ΔΔᵀ with Δ = b − a = 2e₃ − e₇: tr S = 5/4, μ = 1/8.
    const rho = 5 / 7, mu = 5 / 4 / 10;
    const delta = b.map((v, j) => v - a[j]!);
    const want = delta.map((di, i) => delta.map((dj, j) => (i === j ? rho * mu : 0) + (1 - rho) * di * dj / 4));
    close(fit.covariance, want, 14);
  });

  it('the effective sample size n = 1/Σw² from the weights; ρ clamped at 1', () => {
    // Weights 3:1 → w = (3/4, 1/4), n = 1 / (9/16 + 1/16) = 1.6. In d = 4: ρ = 2 / (2.6 − 0.5) = 2/2.1.
    const scale = [1, 1, 1, 1];
    expect(shrunkFit([[0, 0, 0, 0], [1, 0, 0, 0]], [3, 1], scale)!.shrinkage).toBeCloseTo(2 / 2.1, 14);
    // The weighted mean: 3/4 of the first point, 1/4 of the second.
    expect(shrunkFit([[0, 0, 0, 0], [1, 0, 0, 0]], [3, 1], scale)!.mean).toEqual([0.25, 0, 0, 0]);
    // In d = 2: 2 / (2.6 − 1) = 1.25 → 1, the isotropic target alone: μI with μ = tr S / 2 = (3/16)/2.
    const fit = shrunkFit([[0, 0], [1, 0]], [3, 1], [1, 1])!;
    expect(fit.shrinkage).toBe(1);
    close(fit.covariance, [[3 / 32, 0], [0, 3 / 32]], 15);
  });

  it('a scatter that is already a multiple of I: ρ = 1 (no division by zero)', () => {
    const fit = shrunkFit([[1, 0], [-1, 0], [0, 1], [0, -1]], [1, 1, 1, 1], [1, 1])!;
    expect(fit.shrinkage).toBe(1);
    close(fit.covariance, [[0.5, 0], [0, 0.5]], 15);
  });

  it('a scatter a multiple of I up to rounding, with tr(S²) − tr(S)²/d just below 0: ρ = 1, not a negative intensity', () => {
    // Found by a search over crosses c ± s: here the rounding of the scatter makes the denominator −3.5e-18.
    const s = 0.33289999999999986, c = 1.7;
    const fit = shrunkFit([[c + s, c], [c - s, c], [c, c + s], [c, c - s]], [1, 1, 1, 1], [1, 1])!;
    expect(fit.shrinkage).toBe(1);
    // The cross's scatter: each of the four points is ±s from the centre along one axis, so S = (s²/2)·I = μI.
    expect(fit.covariance[0]![0]).toBeCloseTo(s * s / 2, 14);
  });

  it('in x units: each parameter by its scale (D Ŝ D), the mean unscaled', () => {
    const z = [[0, 0, 0], [1, 2, 0], [0, 1, 3]];
    const s = [2, 10, 0.5];
    const unit = shrunkFit(z, [1, 1, 1], [1, 1, 1])!;
    const scaled = shrunkFit(z.map((p) => p.map((v, j) => v * s[j]!)), [1, 1, 1], s)!;
    expect(scaled.shrinkage).toBeCloseTo(unit.shrinkage, 14);
    scaled.mean.forEach((m, j) => expect(m).toBeCloseTo(unit.mean[j]! * s[j]!, 13));
    close(scaled.covariance, unit.covariance.map((row, i) => row.map((v, j) => v * s[i]! * s[j]!)), 12);
  });

  it('points all equal, or a non-finite one: no fit', () => {
    expect(shrunkFit([[1, 2], [1, 2]], [1, 1], [1, 1])).toBeNull();
    expect(shrunkFit([[1, 2], [Number.POSITIVE_INFINITY, 2]], [1, 1], [1, 1])).toBeNull();
  });
});

describe('warmStartFit (WS-CMA-ES)', () => {
  it('one point: N(x, α²·D²)', () => {
    const fit = warmStartFit([[3, -1]], [2, 0.5], 0.1);
    expect(fit.mean).toEqual([3, -1]);
    close(fit.covariance, [[0.01 * 4, 0], [0, 0.01 * 0.25]], 15);
  });

  it('three points: their mean, α²I plus their scatter (divided by k), scaled', () => {
    const top = [[0, 0], [2, 0], [1, 3]];
    const fit = warmStartFit(top, [1, 2], 0.5);
    // In z = (x₁, x₂/2): mean (1, 0.5); deviations (−1, −0.5), (1, −0.5), (0, 1).
    expect(fit.mean[0]).toBeCloseTo(1, 15);
    expect(fit.mean[1]).toBeCloseTo(1, 15);
    const S = [[(1 + 1 + 0) / 3, (0.5 - 0.5 + 0) / 3], [0, (0.25 + 0.25 + 1) / 3]];
    S[1]![0] = S[0]![1]!;
    close(fit.covariance, [[(S[0]![0]! + 0.25) * 1, S[0]![1]! * 2], [S[1]![0]! * 2, (S[1]![1]! + 0.25) * 4]], 14);
  });
});

describe('the search distribution in the parameters\' terms', () => {
  // A correlated prior (L0 not diagonal), a log parameter, and a categorical one.
  const space = searchSpace(
    [
      { name: 'a', type: 'float', scale: 'linear', bounds: [-10, 10], step: null, prior: { mean: 1, std: 2 } },
      { name: 'kind', type: 'categorical', choices: ['x', 'y', 'z'], prior: { probabilities: [0.2, 0.5, 0.3] } },
      { name: 'lr', type: 'float', scale: 'log', bounds: [1e-5, 1], step: null, prior: { mean: Math.log(1e-2), std: 1 } },
    ] as never,
    { mean: [1, Math.log(1e-2)], covariance: [[4, 1.2], [1.2, 1]], std: [2, 1] },
  );
  const L0 = new Matrix([[space.L0.data[0]!, 0], [space.L0.data[2]!, space.L0.data[3]!]]);

  it('t̄ = m0 + L0μ, C = L0ΣL0ᵀ (exactly symmetric), std from C\'s diagonal; the mean in user units; the categorical\'s mode and probabilities', () => {
    expect(space.L0.data[1]).toBe(0);
    expect(space.L0.data[2]).not.toBe(0);
    const dist = { mean: [0.5, -0.7], cov: [[1.5, 0.3], [0.3, 0.8]], categorical: [[0.1, 0.3, 0.6]] };
    const u = userDistribution(space, dist);
    const t = L0.mmul(Matrix.columnVector(dist.mean)).to1DArray().map((v, i) => v + space.m0[i]!);
    u.meanTransformed.forEach((v, i) => expect(v).toBeCloseTo(t[i]!, 13));
    const C = L0.mmul(new Matrix(dist.cov)).mmul(L0.transpose()).to2DArray();
    close(u.covariance, C, 13);
    expect(u.covariance[0]![1]).toBe(u.covariance[1]![0]);
    u.std.forEach((s, i) => expect(s).toBeCloseTo(Math.sqrt(C[i]![i]!), 13));
    expect(u.mean.a).toBeCloseTo(t[0]!, 13);
    expect(u.mean.lr).toBeCloseTo(Math.exp(t[1]!), 13);
    expect(u.mean.kind).toBe('z');
    expect(u.probabilities).toEqual({ kind: [0.1, 0.3, 0.6] });
    expect(Object.keys(u.mean)).toEqual(['a', 'kind', 'lr']);
  });

  it('a negative variance from rounding reads as a std of 0, not NaN', () => {
    const flat = searchSpace([{ name: 'a', type: 'float', scale: 'linear', bounds: null, step: null, prior: { mean: 0, std: 1 } }] as never, { mean: [0], covariance: [[1]], std: [1] });
    expect(userDistribution(flat, { mean: [0], cov: [[-1e-18]], categorical: [] }).std).toEqual([0]);
  });

  it('the prior: N(0, I) internally and the choices\' priors; its centre the origin and the most probable choice', () => {
    const p = priorDistribution(space);
    expect(p).toEqual({ mean: [0, 0], cov: [[1, 0], [0, 1]], categorical: [[0.2, 0.5, 0.3]] });
    expect(centrePoint(p)).toEqual([0, 0, 1]);
  });

  it('read from a stored state: its mean and covariance, its categorical distribution when it has one of the right shape', () => {
    const q = [[0.6, 0.3, 0.1]];
    expect(internalDistribution({ mean: [1, 2], cov: [[1, 0], [0, 1]], categorical: q } as JsonValue, space)).toEqual({ mean: [1, 2], cov: [[1, 0], [0, 1]], categorical: q });
    for (const bad of [undefined, 'x', [[0.5, 0.5]], [[0.2, 0.5, 0.3], [1]], [], [[0.2, '0.5', 0.3]]]) {
      expect(internalDistribution({ mean: [1, 2], cov: [[1, 0], [0, 1]], categorical: bad } as JsonValue, space).categorical, JSON.stringify(bad)).toEqual([[0.2, 0.5, 0.3]]);
    }
  });

  it('with two categorical parameters, one malformed row makes the whole distribution the priors\'', () => {
    const two = searchSpace(
      [
        { name: 'a', type: 'float', scale: 'linear', bounds: [0, 1], step: null, prior: { mean: 0.5, std: 0.25 } },
        { name: 'k', type: 'categorical', choices: ['x', 'y'], prior: { probabilities: [0.5, 0.5] } },
        { name: 'm', type: 'categorical', choices: [1, 2, 3], prior: { probabilities: [0.2, 0.3, 0.5] } },
      ] as never,
      { mean: [0.5], covariance: [[0.0625]], std: [0.25] },
    );
    expect(internalDistribution({ mean: [0], cov: [[1]], categorical: [[0.9, 0.1], [0.1, 0.1, 0.8]] } as JsonValue, two).categorical).toEqual([[0.9, 0.1], [0.1, 0.1, 0.8]]);
    expect(internalDistribution({ mean: [0], cov: [[1]], categorical: [[0.9, 0.1], [0.1, 0.9]] } as JsonValue, two).categorical).toEqual([[0.5, 0.5], [0.2, 0.3, 0.5]]);
  });

  it('a state without a mean and covariance of the space\'s dimension is refused, saying so', () => {
    const states: unknown[] = [null, {}, { mean: [1], cov: [[1, 0], [0, 1]] }, { mean: [1, 'b'], cov: [[1, 0], [0, 1]] }, { mean: [1, 2] }, { mean: [1, 2], cov: [[1, 0]] }, { mean: [1, 2], cov: [[1, 0], [0]] }, { mean: [1, 2], cov: 'I' }];
    for (const s of states) expect(() => internalDistribution(s as JsonValue, space), JSON.stringify(s)).toThrow('engine state has no 2-dimensional mean and covariance');
  });
});
