/**
 * Categorical search distributions (src/engine/distributions/categorical.ts): sampling frequencies
 * against q (seeded, 5 standard errors), the IGO step against its definition, and CatCMA's margin
 * (the reference implementation's q_min = (1 − 0.73^{1/N})/(K − 1) and correction).
 */
import { describe, expect, it } from 'vitest';
import { applyMargin, marginFloor, modeOf, naturalGradientStep, sampleChoice, sampleChoices } from '../../src/engine/distributions/categorical.js';
import { Rng } from '../../src/engine/random/index.js';

describe('sampling', () => {
  it('draws each choice with its probability (10⁵ draws, within 5 binomial standard errors)', () => {
    const q = [0.6, 0.25, 0.1, 0.05];
    const rng = Rng.fromSeed(3);
    const N = 100_000;
    const counts = new Array<number>(q.length).fill(0);
    for (let k = 0; k < N; k++) counts[sampleChoice(rng, q)]!++;
    q.forEach((p, a) => expect(Math.abs(counts[a]! / N - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / N)));
  });

  it('never draws a choice of probability 0 and handles K = 1', () => {
    const rng = Rng.fromSeed(4);
    for (let k = 0; k < 1000; k++) expect(sampleChoice(rng, [0.5, 0, 0.5])).not.toBe(1);
    expect(sampleChoices(rng, [[1], [0, 1]])).toEqual([0, 1]);
  });

  it('the mode is the most probable choice, the first on ties', () => {
    expect(modeOf([0.2, 0.5, 0.3])).toBe(1);
    expect(modeOf([0.4, 0.2, 0.4])).toBe(0);
  });
});

describe('natural-gradient step', () => {
  it('with weights summing to 1 and η = 1 it moves q to the weighted frequencies of the choices', () => {
    const q = [0.25, 0.25, 0.25, 0.25];
    // q + Σ w_i (e_{c_i} − q) = Σ w_i e_{c_i} when Σ w_i = 1 (no margin: floor 0).
    const next = naturalGradientStep(q, [0, 2, 2, 3], [0.5, 0.2, 0.2, 0.1], 1, 0);
    [0.5, 0, 0.4, 0.1].forEach((v, a) => expect(next[a]).toBeCloseTo(v, 15));
  });

  it('keeps Σ q = 1 for weights of any sign (BQ weights can be negative)', () => {
    const next = naturalGradientStep([0.2, 0.3, 0.5], [0, 1, 2, 1], [0.7, -0.4, 0.1, 0.3], 0.3, 0);
    expect(next.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });
});

describe('margin', () => {
  it('q_min = (1 − 0.73^{1/N})/(K − 1), the reference implementation of CatCMA', () => {
    expect(marginFloor(3, 1)).toBeCloseTo(0.27 / 2, 15);
    expect(marginFloor(5, 2)).toBeCloseTo((1 - Math.sqrt(0.73)) / 4, 15);
    expect(marginFloor(1, 3)).toBe(0);
  });

  it('raises probabilities below the floor, keeps the total 1 and every entry ≥ the floor', () => {
    const floor = marginFloor(4, 1);
    const q = applyMargin([0.97, 0.01, 0.01, 0.01], floor);
    expect(q.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
    q.forEach((v) => expect(v).toBeGreaterThanOrEqual(floor - 1e-15));
    // The three small ones sit exactly at the floor; the large one gives up the difference.
    expect(q[1]).toBeCloseTo(floor, 14);
    expect(q[0]).toBeCloseTo(1 - 3 * floor, 14);
  });

  it('leaves a distribution already above the floor unchanged', () => {
    const q = [0.3, 0.3, 0.4];
    applyMargin(q, 0.1).forEach((v, a) => expect(v).toBeCloseTo(q[a]!, 15));
  });

  it('a repeatedly punished choice keeps the floor (it is never lost)', () => {
    let q = [1 / 3, 1 / 3, 1 / 3];
    const floor = marginFloor(3, 1);
    for (let g = 0; g < 200; g++) q = naturalGradientStep(q, [0, 1], [0.5, 0.5], 0.5, floor);
    expect(q[2]).toBeCloseTo(floor, 12);
    expect(q[0]! + q[1]!).toBeCloseTo(1 - floor, 12);
  });
});
