/**
 * The lq-CMA-ES surrogate (src/engine/surrogate): the least-squares fit recovers an exact linear,
 * diagonal-quadratic and full quadratic function and its optimum, the model kind follows the data
 * count rule, and Kendall's τ_b matches values worked out by hand.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { kendallTau } from '../../src/engine/surrogate/kendall.js';
import {
  coefficientCount, fitModel, fitSize, gradientAndHessian, maxModelSize, modelKind, modelOptimum, predict, type Observed,
} from '../../src/engine/surrogate/quadratic.js';

function sample(n: number, count: number, seed: number, f: (x: number[]) => number): Observed[] {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: count }, () => {
    const x = Array.from(rng.normals(n), (v) => 2 * v);
    return { x, y: f(x) };
  });
}

describe('model kind and sizes', () => {
  it('p = n + 1, 2n + 1, n(n + 3)/2 + 1', () => {
    expect([coefficientCount('linear', 5), coefficientCount('diagonal', 5), coefficientCount('full', 5)]).toEqual([6, 11, 21]);
  });

  it('the most complex kind with 0.75 N ≥ 1.1 p (n = 2: diagonal from N = 8, full from N = 9)', () => {
    // n = 2: p = 5 (diagonal) needs N ≥ 1.1·5/0.75 = 7.33, p = 6 (full) needs N ≥ 8.8.
    expect([1, 7, 8, 9, 40].map((N) => modelKind(N, 2))).toEqual(['linear', 'linear', 'diagonal', 'full', 'full']);
    // n = 5: diagonal (p = 11) from N ≥ 16.13, full (p = 21) from N ≥ 30.8.
    expect([16, 17, 30, 31].map((N) => modelKind(N, 5))).toEqual(['linear', 'diagonal', 'diagonal', 'full']);
  });

  it('keeps max(λ, 2 p_full) data and fits the best max(p + 2, ⌊0.75 (N + 1)⌋)', () => {
    expect(maxModelSize(5, 8)).toBe(42);
    expect(maxModelSize(2, 100)).toBe(100);
    expect(fitSize(42, 21)).toBe(32); // ⌊0.75 · 43⌋
    expect(fitSize(10, 21)).toBe(10); // never more than there are
    expect(fitSize(24, 21)).toBe(23); // p + 2
  });
});

describe('least-squares fit', () => {
  it('recovers an exact linear function (n = 3, 4 points: p = 4)', () => {
    const f = (x: number[]) => 3 + 2 * x[0] - x[1] + 0.5 * x[2];
    const data = sample(3, 4, 1, f);
    const m = fitModel(data, 3);
    expect(m.kind).toBe('linear');
    const { b, H } = gradientAndHessian(m, 3);
    b.forEach((v, i) => expect(v).toBeCloseTo([2, -1, 0.5][i], 9));
    expect(H.flat().every((v) => v === 0)).toBe(true);
    for (const { x } of sample(3, 5, 2, f)) expect(predict(m, x)).toBeCloseTo(f(x), 9);
    // The linear model has no optimum: lq-CMA-ES steps from the best point by −2b.
    const best = data.reduce((a, o) => (o.y < a.y ? o : a));
    modelOptimum(m, 3).forEach((v, i) => expect(v).toBeCloseTo(best.x[i] - 2 * [2, -1, 0.5][i], 9));
  });

  it('recovers a diagonal quadratic and its minimum (n = 3, 11 points: diagonal, not full)', () => {
    const a = [1, 10, 100];
    const c = [0.5, -1, 2];
    const f = (x: number[]) => 7 + x.reduce((s, v, i) => s + a[i] * (v - c[i]) ** 2, 0);
    const m = fitModel(sample(3, 11, 3, f), 3);
    expect(m.kind).toBe('diagonal');
    const { H } = gradientAndHessian(m, 3);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) expect(H[i][j]).toBeCloseTo(i === j ? a[i] : 0, 7);
    modelOptimum(m, 3).forEach((v, i) => expect(v).toBeCloseTo(c[i], 8));
    expect(predict(m, c)).toBeCloseTo(7, 7);
  });

  it('recovers a rotated (full) quadratic and its minimum (n = 3, 20 points)', () => {
    // f(x) = (x − c)ᵀA(x − c) − 4 with A symmetric positive definite and not diagonal.
    const A = [[4, 1, 0.5], [1, 3, -1], [0.5, -1, 2]];
    const c = [1, 2, -0.5];
    const f = (x: number[]) => {
      const u = x.map((v, i) => v - c[i]);
      return A.reduce((s, row, i) => s + u[i] * row.reduce((t, aij, j) => t + aij * u[j], 0), 0) - 4;
    };
    const m = fitModel(sample(3, 20, 4, f), 3);
    expect(m.kind).toBe('full');
    const { H } = gradientAndHessian(m, 3);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) expect(H[i][j]).toBeCloseTo(A[i][j], 7);
    modelOptimum(m, 3).forEach((v, i) => expect(v).toBeCloseTo(c[i], 8));
    for (const { x } of sample(3, 5, 5, f)) expect(predict(m, x)).toBeCloseTo(f(x), 6);
  });

  it('with fewer points than coefficients gives the minimum-norm solution (finite, interpolating)', () => {
    const f = (x: number[]) => x.reduce((s, v) => s + v * v, 0);
    const data = sample(10, 3, 6, f); // 3 points, a linear model has 11 coefficients
    const m = fitModel(data, 10);
    expect(m.coefficients.every(Number.isFinite)).toBe(true);
    for (const o of data) expect(predict(m, o.x)).toBeCloseTo(o.y, 8);
  });

  it('leaves the worst quarter out of the fit: a wild worst point does not change the model', () => {
    const f = (x: number[]) => (x[0] - 1) ** 2 + 3 * x[1] ** 2 + x[0] * x[1];
    const data = sample(2, 12, 7, f); // N = 12: full model, fitted on the best max(8, ⌊9.75⌋) = 9
    data[0] = { x: data[0].x, y: 1e6 }; // now the worst point, and far off the quadratic
    const m = fitModel(data, 2);
    expect(m.kind).toBe('full');
    for (const { x } of sample(2, 5, 8, f)) expect(predict(m, x)).toBeCloseTo(f(x), 7);
  });
});

describe('Kendall τ_b', () => {
  it('one swapped pair of four: (5 − 1)/6 = 2/3', () => {
    // Pairs of (1, 2, 3, 4) vs (1, 3, 2, 4): only the pair (2nd, 3rd) is discordant.
    expect(kendallTau([1, 2, 3, 4], [1, 3, 2, 4])).toBeCloseTo(2 / 3, 15);
  });

  it('ties: (1, 2, 2, 3) vs (1, 2, 3, 3) is 4/√(5·5) = 0.8 (scipy.stats.kendalltau gives 0.8)', () => {
    // 6 pairs: 4 concordant, one tied in a (2nd, 3rd), one tied in b (3rd, 4th), none discordant.
    expect(kendallTau([1, 2, 2, 3], [1, 2, 3, 3])).toBeCloseTo(0.8, 15);
  });

  it('is 1 for the same order, −1 for the reverse, 0 when a side is constant, and invariant to monotone maps', () => {
    const a = [0.3, -1, 2, 5, 4.5];
    expect(kendallTau(a, a.map((v) => Math.exp(v)))).toBe(1);
    expect(kendallTau(a, a.map((v) => -v))).toBe(-1);
    expect(kendallTau(a, [1, 1, 1, 1, 1])).toBe(0);
    expect(() => kendallTau([1, 2], [1])).toThrow(/lengths/);
  });
});
