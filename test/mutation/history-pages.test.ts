/**
 * /history's pages (src/domain/studies/history-pages.ts) against a storage stand-in that holds the
 * evaluations in memory: the cursor's text form, the sampled positions 1 + j·k, and pages worked out
 * by hand from the module's definition (every k-th evaluation, every best-so-far step, the latest
 * one; at most pageSize per page). Then the definition as a property: walking every page from the
 * first yields exactly those positions, in order, each once, for strides, sizes and totals around
 * the boundaries.
 */
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, evaluationPage, FIRST_PAGE, HISTORY_LIMITS, nextSampled } from '../../src/domain/studies/history-pages.js';
import type { EvaluationRecord } from '../../src/storage/index.js';

/** Evaluations 1..values.length of `values` (minimised): best so far and the steps where it improved. */
function storage(values: number[]) {
  let best = Infinity;
  const all: EvaluationRecord[] = values.map((value, i) => {
    const improved = value < best;
    best = Math.min(best, value);
    return { index: i + 1, trialId: 100 + i, value, bestSoFar: best, improved };
  });
  const calls: string[] = [];
  return {
    all,
    calls,
    listEvaluations: async (_: string, q: { afterIndex: number; limit: number }) => (calls.push(`list ${q.afterIndex} ${q.limit}`), all.filter((e) => e.index > q.afterIndex).slice(0, q.limit)),
    evaluationsAt: async (_: string, indices: readonly number[]) => (calls.push(`at ${indices.join(',')}`), all.filter((e) => indices.includes(e.index))),
    listBestSteps: async (_: string, q: { afterIndex: number; throughIndex: number; limit: number }) => (
      calls.push(`steps ${q.afterIndex} ${q.throughIndex} ${q.limit}`), all.filter((e) => e.improved && e.index > q.afterIndex && e.index <= q.throughIndex).slice(0, q.limit)
    ),
  };
}

/** Indices of one page. */
async function page(values: number[], afterIndex: number, pageSize: number, stride: number) {
  const s = storage(values);
  const { items, more } = await evaluationPage(s, 'st', values.length, afterIndex, pageSize, stride);
  return { indices: items.map((e) => e.index), more, calls: s.calls, items };
}

describe('the cursor', () => {
  it('is "afterIndex:afterGeneration", read back exactly; the first page starts before generation 0', () => {
    expect(FIRST_PAGE).toEqual({ afterIndex: 0, afterGeneration: -1 });
    expect(encodeCursor({ afterIndex: 12, afterGeneration: 3 })).toBe('12:3');
    expect(decodeCursor(encodeCursor(FIRST_PAGE))).toEqual(FIRST_PAGE);
    expect(decodeCursor('12:3')).toEqual({ afterIndex: 12, afterGeneration: 3 });
    expect(decodeCursor(`${Number.MAX_SAFE_INTEGER}:0`)).toEqual({ afterIndex: Number.MAX_SAFE_INTEGER, afterGeneration: 0 });
  });

  it('anything this module did not write is null', () => {
    for (const s of ['', '12', '12:3:4', 'a:1', '1:-2', '-1:0', ' 1:2', '1:2 ', '1.5:2', '1:2x', `${2 ** 53}:0`, `0:${2 ** 53}`]) expect(decodeCursor(s), s).toBeNull();
  });
});

describe('sampled positions', () => {
  it('the first index after `after` of the form 1 + j·stride', () => {
    const cases: [number, number, number][] = [[0, 3, 1], [1, 3, 4], [2, 3, 4], [3, 3, 4], [4, 3, 7], [0, 1, 1], [5, 1, 6], [9, 10, 11], [10, 10, 11], [11, 10, 21]];
    for (const [after, stride, next] of cases) expect(nextSampled(after, stride), `${after}, ${stride}`).toBe(next);
  });
});

// Values 5, 4, 6, 3, 7, 8, 9, 2, 9, 9: steps (strict improvements) at 1, 2, 4, 8.
const TEN = [5, 4, 6, 3, 7, 8, 9, 2, 9, 9];

describe('one page', () => {
  it('stride 1: pageSize evaluations after the cursor, one storage read; more while the last is before the total', async () => {
    expect(await page(TEN, 0, 3, 1)).toMatchObject({ indices: [1, 2, 3], more: true, calls: ['list 0 3'] });
    expect(await page(TEN, 7, 3, 1)).toMatchObject({ indices: [8, 9, 10], more: false });
    expect(await page(TEN, 9, 3, 1)).toMatchObject({ indices: [10], more: false });
  });

  it('a storage still short of the total it was asked against: an empty page that says no more, not a failure', async () => {
    const s = storage(TEN.slice(0, 6));
    for (const stride of [1, 3]) expect(await evaluationPage(s, 'st', 10, 8, 3, stride), String(stride)).toEqual({ items: [], more: false });
  });

  it('at or past the end: empty, nothing read', async () => {
    for (const after of [10, 11]) {
      for (const stride of [1, 3]) expect(await page(TEN, after, 3, stride), `${after}, ${stride}`).toEqual({ indices: [], more: false, calls: [], items: [] });
    }
  });

  it('stride 3, pages of 2: sampled 1 and 4 span the page; step 2 joins them; cut at pageSize', async () => {
    const p = await page(TEN, 0, 2, 3);
    expect(p).toMatchObject({ indices: [1, 2], more: true });
    expect(p.calls).toEqual(['at 1,4', 'steps 0 4 2']);
    expect(p.items[1]).toEqual({ index: 2, trialId: 101, value: 4, bestSoFar: 4, improved: true });
  });

  it('stride 3, pages of 3: sampled 4, 7 and 10 reach the total; step 8 within', async () => {
    const p = await page(TEN, 2, 3, 3);
    expect(p).toMatchObject({ indices: [4, 7, 8], more: true });
    expect(p.calls).toEqual(['at 4,7,10', 'steps 2 10 3']);
  });

  it('the latest evaluation is added when the sampled positions end before it', async () => {
    // Total 11: sampled 10 only (one of a page of 4), then 11, the latest.
    const p = await page([...TEN, 9], 9, 4, 3);
    expect(p).toMatchObject({ indices: [10, 11], more: false });
    expect(p.calls).toEqual(['at 10,11', 'steps 9 11 4']);
    // Total 10: the last sampled position is the total itself, not added twice.
    expect((await page(TEN, 9, 4, 3)).calls).toEqual(['at 10', 'steps 9 10 4']);
  });
});

describe('every page from the first', () => {
  /** 1 + j·k, the steps and the total, in order: the definition. */
  function expected(values: number[], stride: number): number[] {
    const s = storage(values);
    const set = new Set<number>();
    for (let i = 1; i <= values.length; i += stride) set.add(i);
    for (const e of s.all) if (e.improved) set.add(e.index);
    if (values.length > 0) set.add(values.length);
    return [...set].sort((a, b) => a - b);
  }

  it('yields each sampled position, step and the latest once, in order', async () => {
    // A descending run makes every evaluation a step; a flat run none after the first.
    const series: number[][] = [TEN, [...TEN, 9], Array.from({ length: 23 }, (_, i) => (i * 7919) % 13), Array.from({ length: 17 }, (_, i) => 20 - i), Array.from({ length: 17 }, () => 1), [3]];
    for (const values of series) {
      for (const stride of [1, 2, 3, 5, 16, 40]) {
        for (const pageSize of [1, 2, 3, 7, 50]) {
          const got: number[] = [];
          let after = 0;
          for (let guard = 0; guard < 100; guard++) {
            const p = await page(values, after, pageSize, stride);
            expect(p.indices.length, 'no page larger than pageSize').toBeLessThanOrEqual(pageSize);
            got.push(...p.indices);
            if (!p.more) break;
            expect(p.indices.length, 'a page with more after it is not empty').toBeGreaterThan(0);
            after = p.indices[p.indices.length - 1]!;
          }
          const want = stride === 1 ? values.map((_, i) => i + 1) : expected(values, stride);
          expect(got, `${values.length} values, stride ${stride}, pages of ${pageSize}`).toEqual(want);
        }
      }
    }
  });

  it('the documented limits', () => {
    expect(HISTORY_LIMITS).toEqual({ defaultPageSize: 1000, maxPageSize: 10_000, maxStride: 1_000_000, generationsPerPage: 100 });
  });
});
