/**
 * The scalar targets of ALGORITHM.md §32.2–§32.4 (src/engine/multi/targets.ts). Evidence: every
 * expected value is worked by hand from the formulas of §32 (augmented Chebyshev with ρ = 0.05 after
 * normalising by the feasible range; Deb's order y = max(s, ŷ) + scale·CV/v̄; infeasible
 * y = max y + 0.1·(max y − min y)); the arithmetic is written out beside each case.
 */
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../src/engine/errors.js';
import { scalarTargets, targetContext, targetOf, violation, type Outcome } from '../../../src/engine/multi/targets.js';

describe('scalar targets', () => {
  // Weights (0.25, 0.75), K = 1. Feasible: A (0, 1), B (1, 0), E (0.5, 0.25): range [0, 1] in both.
  // Violators: C (0.5, 0.5) with c = 2, D (2, 2) with c = 4 (outside the feasible range). G infeasible.
  const outcomes: Outcome[] = [
    { y: 0, f: [0, 1], c: [-1] }, // A
    { y: 1, f: [1, 0], c: [0] }, // B: c = 0 is feasible (c ≤ 0)
    { y: 0.5, f: [0.5, 0.25], c: [-3] }, // E
    { y: 0.5, f: [0.5, 0.5], c: [2] }, // C
    { y: 2, f: [2, 2], c: [4] }, // D
    { y: 0, infeasible: true }, // G
  ];
  const y = scalarTargets(outcomes, { objectives: 2, weights: [0.25, 0.75] });

  it('feasible points get the augmented Chebyshev value over the feasible range', () => {
    // A: max(0, 0.75) + 0.05·0.75 = 0.7875; B: max(0.25, 0) + 0.05·0.25 = 0.2625;
    // E: max(0.125, 0.1875) + 0.05·0.3125 = 0.203125.
    expect(y[0]).toBeCloseTo(0.7875, 12);
    expect(y[1]).toBeCloseTo(0.2625, 12);
    expect(y[2]).toBeCloseTo(0.203125, 12);
  });

  it('violators follow Deb\'s order: behind every feasible point, then by violation', () => {
    // ŷ = 0.7875 (A), v̄ = median(2, 4) = 3. C: s = max(0.125, 0.375) + 0.05·0.5 = 0.4 → max(0.4, ŷ) + 2/3;
    // D: s = max(0.5, 1.5) + 0.05·2 = 1.6 → 1.6 + 4/3.
    expect(y[3]).toBeCloseTo(0.7875 + 2 / 3, 12);
    expect(y[4]).toBeCloseTo(1.6 + 4 / 3, 12);
    expect(Math.min(y[3], y[4])).toBeGreaterThan(Math.max(y[0], y[1], y[2]));
  });

  it('an infeasible point is the worst value plus a tenth of the span', () => {
    // max = 2.9333…, min = 0.203125: 2.9333… + 0.1·(2.9333… − 0.203125).
    const hi = 1.6 + 4 / 3;
    expect(y[5]).toBeCloseTo(hi + 0.1 * (hi - 0.203125), 12);
  });

  it('one objective: the raw value, the violation scaled by the feasible range', () => {
    // Feasible 3 and 1: range 2, ŷ = 3; the violator (f = 0, c = 1, v̄ = 1): max(0, 3) + 2·1/1 = 5;
    // infeasible: 5 + 0.1·(5 − 1) = 5.4.
    const t = scalarTargets([{ y: 3 }, { y: 1, f: [1], c: [-1] }, { y: 0, f: [0], c: [1] }, { y: 0, infeasible: true }], { objectives: 1, weights: null });
    expect(t).toEqual([3, 1, 5, 5.4]);
  });

  it('nothing feasible: the violators rank by violation alone; nothing evaluated: all 0', () => {
    const t = scalarTargets([{ y: 0, f: [0, 0], c: [3] }, { y: 0, f: [1, 1], c: [1] }], { objectives: 2, weights: [0.5, 0.5] });
    expect(t[1]).toBeLessThan(t[0]);
    expect(scalarTargets([{ y: 0, infeasible: true }, { y: 0, infeasible: true }], { objectives: 2, weights: [0.5, 0.5] })).toEqual([0, 0]);
  });

  it('normalises by the front\'s range when asked (ideal to nadir of the non-dominated feasible points)', () => {
    // A (0, 1), B (1, 0) on the front, C (2, 2) dominated; w = (0.5, 0.5). Front range [0, 1]²: s(A) = max(0, 0.5) + 0.05·0.5;
    // feasible range [0, 2]²: f̄(A) = (0, 0.5), s(A) = max(0, 0.25) + 0.05·0.25.
    const pts: Outcome[] = [{ y: 0, f: [0, 1] }, { y: 1, f: [1, 0] }, { y: 2, f: [2, 2] }];
    expect(scalarTargets(pts, { objectives: 2, weights: [0.5, 0.5], normalise: 'front' })[0]).toBeCloseTo(0.525, 12);
    expect(scalarTargets(pts, { objectives: 2, weights: [0.5, 0.5] })[0]).toBeCloseTo(0.2625, 12);
    // C: max(1, 1) + 0.05·2 = 1.1 against the front's range.
    expect(scalarTargets(pts, { objectives: 2, weights: [0.5, 0.5], normalise: 'front' })[2]).toBeCloseTo(1.1, 12);
  });

  it('with a declared reference point, the front\'s normalisation runs from the ideal to it', () => {
    // A (0, 1), B (1, 0), C (2, 2); r = (4, 2), w = (0.5, 0.5): ranges [0, 4] and [0, 2] (r above the ideal 0 in both).
    // f̄(A) = (0, 0.5): s = max(0, 0.25) + 0.05·(0 + 0.25) = 0.2625; f̄(C) = (0.5, 1): s = 0.5 + 0.05·0.75 = 0.5375.
    const pts: Outcome[] = [{ y: 0, f: [0, 1] }, { y: 1, f: [1, 0] }, { y: 2, f: [2, 2] }];
    const spec = { objectives: 2, weights: [0.5, 0.5], normalise: 'front' as const, reference: [4, 2] };
    const y = scalarTargets(pts, spec);
    expect(y[0]).toBeCloseTo(0.2625, 12);
    expect(y[2]).toBeCloseTo(0.5375, 12);
    // An r_i at or below the ideal leaves objective i the front's range [0, 1]: f̄(A) = (0, 0.5) from r_2 = 2 alone,
    // and with neither (r = (−1, 0)) f̄(A) = (0, 1), s = 0.5 + 0.05·0.5 = 0.525, the front's normalisation above.
    expect(scalarTargets(pts, { ...spec, reference: [-1, 2] })[0]).toBeCloseTo(0.2625, 12);
    expect(scalarTargets(pts, { ...spec, reference: [-1, 0] })[0]).toBeCloseTo(0.525, 12);
    // r_1 at the ideal exactly: objective 1 keeps the front's range, here [0, 2] with B' = (2, 0) (a range of 0
    // would only shift it): f̄(B') = (1, 0), s = 0.5 + 0.05·0.5; f̄(A) = (0, 0.5) with r_2 = 2, s = 0.2625.
    const wide: Outcome[] = [{ y: 0, f: [0, 1] }, { y: 1, f: [2, 0] }, { y: 2, f: [4, 4] }];
    expect(scalarTargets(wide, { ...spec, reference: [0, 2] })[0]).toBeCloseTo(0.2625, 12);
    expect(scalarTargets(wide, { ...spec, reference: [0, 2] })[1]).toBeCloseTo(0.5 + 0.05 * 0.5, 12);
    // The feasible normalisation ignores it: [0, 2]² as above.
    expect(scalarTargets(pts, { objectives: 2, weights: [0.5, 0.5], reference: [4, 2] })[0]).toBeCloseTo(0.2625, 12);
    // B (1, 0): f̄ = (0.5, 0), s = 0.25 + 0.05·0.25 (with r_1 = 40 it would be f̄_1 = 1/40).
    expect(scalarTargets(pts, { objectives: 2, weights: [0.5, 0.5], reference: [40, 2] })[1]).toBeCloseTo(0.2625, 12);
  });

  it('the additive penalty gives up Deb\'s order: s + CV/v̄', () => {
    // C of the first case: s = 0.4, v̄ = 3: 0.4 + 2/3, below A's 0.7875.
    const t = scalarTargets(outcomes, { objectives: 2, weights: [0.25, 0.75], penalty: 'additive' });
    expect(t[3]).toBeCloseTo(0.4 + 2 / 3, 12);
    expect(t[0]).toBeCloseTo(0.7875, 12);
  });

  it('a batch scored against the history\'s context gets the values it has in the history', () => {
    const ctx = targetContext(outcomes, { objectives: 2, weights: [0.25, 0.75] });
    outcomes.forEach((o, j) => expect(targetOf(ctx, o, j)).toBe(y[j]));
  });

  it('refuses a wrong number of objective values, a non-finite one, and missing weights', () => {
    expect(() => scalarTargets([{ y: 0, f: [1] }], { objectives: 2, weights: [0.5, 0.5] })).toThrow(InvalidInputError);
    expect(() => scalarTargets([{ y: 0, f: [1, Number.NaN] }], { objectives: 2, weights: [0.5, 0.5] })).toThrow(/non-finite/);
    expect(() => scalarTargets([{ y: 0, f: [1, 2] }], { objectives: 2, weights: null })).toThrow(/weights/);
    expect(violation([-1, 2, 0.5])).toBe(2.5);
  });
});
