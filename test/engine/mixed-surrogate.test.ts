/**
 * lq-CMA-ES's surrogate on a mixed space (src/engine/surrogate/mixed-quadratic.ts): the fit recovers
 * a function that is quadratic in the continuous coordinates plus an offset per choice exactly, and
 * its continuous optimum (the stationary point worked out by hand); the kind ladder counts the
 * indicators; inactive coordinates are imputed, so two points that differ only there get one value.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import {
  fitMixedModel, indicatorCount, mixedCoefficientCount, mixedMaxModelSize, mixedModelKind, mixedModelOptimum, predictMixed, type MixedLayout,
} from '../../src/engine/surrogate/mixed-quadratic.js';
import type { Observed } from '../../src/engine/surrogate/quadratic.js';

const K = [3, 2];
/** f = 1 + (u0 − 1)² + 2(u1 + 0.5)² + ½ u0 u1 + [0, 0.3, −0.2][c0] + [0, 1][c1]. */
const f = (x: number[]) => 1 + (x[0]! - 1) ** 2 + 2 * (x[1]! + 0.5) ** 2 + 0.5 * x[0]! * x[1]! + [0, 0.3, -0.2][x[2]!]! + [0, 1][x[3]!]!;

function sample(count: number, seed: number, g: (x: number[]) => number): Observed[] {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: count }, () => {
    const x = [2 * rng.normal(), 2 * rng.normal(), Math.floor(3 * rng.uniform()), Math.floor(2 * rng.uniform())];
    return { x, y: g(x) };
  });
}

describe('the mixed linear-quadratic surrogate', () => {
  it('p counts one indicator per choice but the first; the kind ladder and the size limit count them', () => {
    expect(indicatorCount(K)).toBe(3);
    expect(['linear', 'diagonal', 'full'].map((k) => mixedCoefficientCount(k as 'linear', 2, K))).toEqual([6, 8, 9]);
    // 0.75 N ≥ 1.1 p: diagonal (p = 8) from N ≥ 11.7, full (p = 9) from N ≥ 13.2.
    expect([11, 12, 13, 14].map((N) => mixedModelKind(N, 2, K))).toEqual(['linear', 'diagonal', 'diagonal', 'full']);
    expect(mixedModelKind(1000, 0, K)).toBe('linear');
    expect(mixedMaxModelSize(2, K, 6)).toBe(18); // max(6, 2·9, ⌈1.1·9/0.75⌉ = 14)
    expect(mixedMaxModelSize(0, K, 6)).toBe(8); // p = 4 (linear only): max(6, 8, 6)
  });

  it('recovers a quadratic plus an offset per choice exactly, and its continuous optimum', () => {
    const layout: MixedLayout = { dc: 2, K, conditions: [] };
    const model = fitMixedModel(sample(40, 3, f), layout);
    expect(model.kind).toBe('full');
    for (const o of sample(20, 9, f)) expect(predictMixed(model, o.x)).toBeCloseTo(o.y, 8);
    // ∇ = 0: 2(u0 − 1) + ½ u1 = 0 and 4(u1 + 0.5) + ½ u0 = 0 → u1 = −2.5/3.875, u0 = 1 − u1/4.
    const u1 = -2.5 / 3.875;
    const opt = mixedModelOptimum(model);
    expect(opt[0]).toBeCloseTo(1 - u1 / 4, 8);
    expect(opt[1]).toBeCloseTo(u1, 8);
  });

  it('without continuous coordinates the model is linear in the indicators', () => {
    const g = (x: number[]) => [0, 0.3, -0.2][x[0]!]! + [0, 1][x[1]!]!;
    const rng = Rng.fromSeed(4);
    const data = Array.from({ length: 12 }, () => {
      const x = [Math.floor(3 * rng.uniform()), Math.floor(2 * rng.uniform())];
      return { x, y: g(x) };
    });
    const model = fitMixedModel(data, { dc: 0, K, conditions: [] });
    for (const x of [[0, 0], [1, 0], [2, 1]]) expect(predictMixed(model, x)).toBeCloseTo(g(x), 10);
    expect(mixedModelOptimum(model)).toEqual([]);
  });

  it('imputes inactive coordinates: points that differ only there get one value (they do not without the conditions)', () => {
    // u1 active only when c0 = 1; c1 active only when c0 = 2.
    const conditions = [{ index: 1, parent: 2, values: [1] }, { index: 3, parent: 2, values: [2] }];
    const g = (x: number[]) => (x[0]! - 1) ** 2 + (x[2] === 1 ? (x[1]! - 1) ** 2 : 0.5) + (x[2] === 2 ? 0.3 * x[3]! : 0);
    const data = sample(40, 5, g);
    const withConditions = fitMixedModel(data, { dc: 2, K, conditions });
    const without = fitMixedModel(data, { dc: 2, K, conditions: [] });
    const a = [0.3, -1.2, 0, 1], b = [0.3, 2.5, 0, 0]; // c0 = 0: u1 and c1 both inactive
    expect(predictMixed(withConditions, a)).toBe(predictMixed(withConditions, b));
    expect(predictMixed(without, a)).not.toBe(predictMixed(without, b));
    // Where they are active they count: the same u1 change under c0 = 1 changes the value.
    expect(predictMixed(withConditions, [0.3, -1.2, 1, 0])).not.toBeCloseTo(predictMixed(withConditions, [0.3, 2.5, 1, 0]), 3);
  });

  it('refuses an empty data set', () => {
    expect(() => fitMixedModel([], { dc: 1, K: [2], conditions: [] })).toThrow('at least one data point');
  });
});
