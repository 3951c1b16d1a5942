/**
 * The intermediate-values panel's data (src/ui/curves.js, a browser module with no DOM use at
 * import): the median line is the median rule's median (src/domain/studies/stopping-rule.ts) over
 * the trials that completed without being stopped, and the cap keeps the most recent curves plus the best.
 */
import { describe, expect, it } from 'vitest';
import { median as ruleMedian } from '../../src/domain/studies/stopping-rule.js';
// @ts-expect-error a plain browser ES module without type declarations
import { chooseCurves, median, stepMedians } from '../../src/ui/curves.js';

type Curve = { trial_id: number; intermediate_values: { step: number; value: number }[] };
const medianOf = median as (v: number[]) => number;
const medians = stepMedians as (c: Curve[], t: Map<number, { trial_id: number; state: string; stopped: boolean }>) => Map<number, { median: number; n: number }>;
const choose = chooseCurves as (c: Curve[], best: number | null, cap?: number) => Curve[];

describe('intermediate-values panel data', () => {
  it('computes the same median as the rule, odd and even counts', () => {
    let s = 7;
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let n = 1; n <= 12; n++) {
      const v = Array.from({ length: n }, () => Math.round(rand() * 100) / 10 - 3);
      expect(medianOf(v)).toBe(ruleMedian(v));
    }
    expect(medianOf([3, 1, 2])).toBe(2);
    expect(medianOf([4, 1, 3, 2])).toBe(2.5);
  });

  it('counts only trials that completed without being stopped, at each step', () => {
    const c = (id: number, values: number[]): Curve => ({ trial_id: id, intermediate_values: values.map((value, step) => ({ step, value })) });
    const curves = [c(1, [10, 8, 6]), c(2, [12, 9, 7]), c(3, [20, 18]), c(4, [11, 5, 1]), c(5, [9, 9, 9])];
    const trials = new Map([
      [1, { trial_id: 1, state: 'COMPLETED', stopped: false }],
      [2, { trial_id: 2, state: 'COMPLETED', stopped: false }],
      [3, { trial_id: 3, state: 'COMPLETED', stopped: true }],
      [4, { trial_id: 4, state: 'ACTIVE', stopped: false }],
      [5, { trial_id: 5, state: 'COMPLETED', stopped: false }],
    ]);
    const m = medians(curves, trials);
    // Trials 1, 2, 5: step 0 {10, 12, 9} → 10; step 1 {8, 9, 9} → 9; step 2 {6, 7, 9} → 7.
    expect([...m]).toEqual([[0, { median: 10, n: 3 }], [1, { median: 9, n: 3 }], [2, { median: 7, n: 3 }]]);
  });

  it('keeps the cap most recent curves and the best', () => {
    const curves: Curve[] = Array.from({ length: 10 }, (_, i) => ({ trial_id: 10 - i, intermediate_values: [{ step: 0, value: i }] }));
    expect(choose(curves, 2, 3).map((x) => x.trial_id)).toEqual([2, 8, 9, 10]);
    expect(choose(curves, 9, 3).map((x) => x.trial_id)).toEqual([8, 9, 10]);
    expect(choose(curves, null, 3).map((x) => x.trial_id)).toEqual([8, 9, 10]);
    expect(choose(curves, 2, 20)).toHaveLength(10);
  });
});
