/**
 * The intermediate-values panel's data (src/ui/curves.js, a browser module with no DOM use at
 * import): the median line is the median rule's median (src/domain/studies/stopping-rule.ts) over
 * the trials that completed without being stopped, the cap keeps the most recent curves plus the best,
 * and loadCurves follows the route's pages (joining a curve split across two) up to its cap of values.
 */
import { describe, expect, it } from 'vitest';
import { INTERMEDIATE_LIMITS } from '../../src/domain/index.js';
import { median as ruleMedian } from '../../src/domain/studies/stopping-rule.js';
// @ts-expect-error a plain browser ES module without type declarations
import { chooseCurves, CURVE_PAGE_SIZE, loadCurves, MAX_CURVE_VALUES, median, stepMedians } from '../../src/ui/curves.js';

type Curve = { trial_id: number; intermediate_values: { step: number; value: number }[] };
const medianOf = median as (v: number[]) => number;
const medians = stepMedians as (c: Curve[], t: Map<number, { trial_id: number; state: string; stopped: boolean }>) => Map<number, { median: number; n: number }>;
const choose = chooseCurves as (c: Curve[], best: number | null, cap?: number) => Curve[];
type Page = { trials: Curve[]; next_page_token: string | null };
const load = loadCurves as (fetchPage: (size: number, token: string | null) => Promise<Page>, cap?: number, pageSize?: number) => Promise<{ curves: Curve[]; values: number; complete: boolean }>;

/** The route's paging as it is specified (routes/intermediate.ts): `size` values per page in (trial id, step) order, a curve cut where the page ends. */
function pager(curves: Curve[]) {
  const flat = curves.flatMap((c) => c.intermediate_values.map((v) => ({ trial_id: c.trial_id, ...v })));
  const asked: number[] = [];
  const fetchPage = async (size: number, token: string | null): Promise<Page> => {
    asked.push(size);
    const from = token === null ? 0 : Number(token);
    const trials: Curve[] = [];
    for (const { trial_id, step, value } of flat.slice(from, from + size)) {
      const last = trials[trials.length - 1];
      if (last?.trial_id === trial_id) last.intermediate_values.push({ step, value });
      else trials.push({ trial_id, intermediate_values: [{ step, value }] });
    }
    return { trials, next_page_token: from + size < flat.length ? String(from + size) : null };
  };
  return { fetchPage, asked };
}

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

  it('reads every page, joining the curves the pages cut, and stops at its cap of values', async () => {
    const curves: Curve[] = [3, 1, 7, 12].map((n, i) => ({ trial_id: i + 1, intermediate_values: Array.from({ length: n }, (_, s) => ({ step: s, value: i * 100 + s })) }));
    const all = pager(curves);
    expect(await load(all.fetchPage, 1000, 5)).toEqual({ curves, values: 23, complete: true });
    expect(all.asked).toEqual([5, 5, 5, 5, 5]);
    // A cap of 9 values: two pages of 5 would overshoot it, so the second asks for 4.
    const capped = pager(curves);
    const r = await load(capped.fetchPage, 9, 5);
    expect(capped.asked).toEqual([5, 4]);
    expect(r.complete).toBe(false);
    expect(r.values).toBe(9);
    expect(r.curves).toEqual([curves[0], curves[1], { trial_id: 3, intermediate_values: curves[2]!.intermediate_values.slice(0, 5) }]);
    // The cap read exactly fills the listing: nothing left, so complete.
    expect((await load(pager(curves).fetchPage, 23, 5)).complete).toBe(true);
    expect(await load(pager([]).fetchPage)).toEqual({ curves: [], values: 0, complete: true });
    // The documented figures (docs/dashboard.md): pages of the route's maximum, 20 of them at most.
    expect(CURVE_PAGE_SIZE).toBe(INTERMEDIATE_LIMITS.maxPageSize);
    expect(MAX_CURVE_VALUES).toBe(20 * INTERMEDIATE_LIMITS.maxPageSize);
  });

  it('keeps the cap most recent curves and the best', () => {
    const curves: Curve[] = Array.from({ length: 10 }, (_, i) => ({ trial_id: 10 - i, intermediate_values: [{ step: 0, value: i }] }));
    expect(choose(curves, 2, 3).map((x) => x.trial_id)).toEqual([2, 8, 9, 10]);
    expect(choose(curves, 9, 3).map((x) => x.trial_id)).toEqual([8, 9, 10]);
    expect(choose(curves, null, 3).map((x) => x.trial_id)).toEqual([8, 9, 10]);
    expect(choose(curves, 2, 20)).toHaveLength(10);
  });
});
