/**
 * The dashboard's log-axis ticks (src/ui/charts.js, a browser module with no DOM use at import):
 * every k-th decade, k the smallest step that leaves the minimum gap between labels; and the colour
 * rank of results, by the loss the API gives (lower is better whatever the study's direction).
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain browser ES module without type declarations
import { decadeLabel, logSplits, rankPositions } from '../../src/ui/charts.js';

const split = logSplits as (min: number, max: number, px: number, gap?: number) => number[];

describe('log-axis ticks', () => {
  it('a regret from 1e1 down to 1e-32 in 230 px gets one label every 5 decades (34 would overlap)', () => {
    const s = split(1e-32, 10, 230);
    const k = s.map((v) => Math.round(Math.log10(v)));
    // 33 decades, at most floor(230 / 26) = 8 labels: step ceil(33 / 8) = 5.
    expect(k).toEqual([-30, -25, -20, -15, -10, -5, 0]);
    expect(s.length * 26).toBeLessThanOrEqual(230);
  });

  it('every decade when there is room, and the smallest step that fits otherwise', () => {
    expect(split(1e-3, 1e2, 300).map((v) => Math.round(Math.log10(v)))).toEqual([-3, -2, -1, 0, 1, 2]);
    for (const px of [60, 100, 230, 400]) {
      for (const decades of [2, 7, 33, 300]) {
        const s = split(10 ** -decades, 1, px);
        const steps = s.slice(1).map((v, i) => Math.round(Math.log10(v) - Math.log10(s[i]!)));
        const step = steps[0] ?? 1;
        expect(new Set(steps).size).toBeLessThanOrEqual(1);
        // At most `fit` gaps of 26 px between labels; with one decade less per step there would be more.
        const fit = Math.max(Math.floor(px / 26), 1);
        expect(decades / step).toBeLessThanOrEqual(fit);
        if (step > 1) expect(decades / (step - 1)).toBeGreaterThan(fit);
      }
    }
  });

  it('labels decades as powers of ten', () => {
    expect([1, 10, 1e-5, 1e-32, 1e3].map(decadeLabel)).toEqual(['1', '10', '10⁻⁵', '10⁻³²', '10³']);
    expect(decadeLabel(0)).toBe('');
  });
});

describe('rank positions', () => {
  const rank = rankPositions as (losses: number[]) => number[];
  it('0 for the lowest loss, 1 for the highest, evenly by rank; ties in their given order', () => {
    expect(rank([3, 1, 2])).toEqual([1, 0, 0.5]);
    // A study that maximises: its values 1, 3, 2 have losses −1, −3, −2; 3 is best.
    expect(rank([-1, -3, -2])).toEqual([1, 0, 0.5]);
    expect(rank([5, 5, 4])).toEqual([0.5, 1, 0]);
    expect(rank([7])).toEqual([0]);
  });
});
