/**
 * The meaning of a result (src/domain/results): which value is better in each direction, the value
 * the engine minimises, the engine's observation of a trial (its standard error kept), regret, and
 * the evaluation rows (position, best so far, steps) placed whatever order results arrive in.
 * Expected values are the definitions, written out by hand or computed in a few lines here.
 */
import { describe, expect, it } from 'vitest';
import {
  bestOf,
  better,
  compareBest,
  completionOf,
  completionRows,
  engineObservation,
  engineValue,
  evaluationsOf,
  importedEvaluations,
  objectiveOf,
  objectiveValue,
  ModelHistory,
  placeEvaluations,
  regret,
  regretHistory,
  worstValue,
  type Completion,
} from '../../src/domain/results/index.js';
import type { EvaluationsAround, KeyedEvaluation } from '../../src/storage/index.js';

const MIN = objectiveOf({ direction: 'minimize' });
const MAX = objectiveOf({ direction: 'maximize' });

describe('objective', () => {
  it('the engine minimises the value when minimising and its negation when maximising; objectiveValue inverts it', () => {
    expect(engineValue(MIN, 2.5)).toBe(2.5);
    expect(engineValue(MAX, 2.5)).toBe(-2.5);
    expect(objectiveValue(MIN, -7)).toBe(-7);
    expect(objectiveValue(MAX, -7)).toBe(7);
    expect(objectiveValue(MAX, engineValue(MAX, 3))).toBe(3);
  });

  it('better: smaller when minimising, larger when maximising, strictly', () => {
    expect(better(MIN, 1, 2)).toBe(true);
    expect(better(MIN, 2, 1)).toBe(false);
    expect(better(MAX, 1, 2)).toBe(false);
    expect(better(MAX, 3, 2)).toBe(true);
    expect(better(MIN, 2, 2)).toBe(false);
    expect(better(MAX, 2, 2)).toBe(false);
  });

  it('compareBest sorts best first; worstValue loses to every value; bestOf keeps the first of ties', () => {
    expect([3, 1, 2].sort((a, b) => compareBest(MIN, a, b))).toEqual([1, 2, 3]);
    expect([3, 1, 2].sort((a, b) => compareBest(MAX, a, b))).toEqual([3, 2, 1]);
    expect(compareBest(MAX, 2, 2)).toBe(0);
    expect(worstValue(MIN)).toBe(Infinity);
    expect(worstValue(MAX)).toBe(-Infinity);
    expect(bestOf(MIN, [])).toBe(Infinity);
    expect(bestOf(MAX, [])).toBe(-Infinity);
    expect(bestOf(MIN, [3, -1, 2])).toBe(-1);
    expect(bestOf(MAX, [3, -1, 2])).toBe(3);
    expect(Object.is(bestOf(MIN, [0, -0]), 0)).toBe(true);
  });

  it('regret is best − f* when minimising and f* − best when maximising', () => {
    expect(regret(MIN, 1.5, 1)).toBe(0.5);
    expect(regret(MAX, 1.5, 2)).toBe(0.5);
    // 0 on reaching the optimum (−0 when maximising, which JSON writes as 0).
    expect(regret(MAX, 2, 2) === 0).toBe(true);
  });

  it('the engine observation: x, the value it minimises, and the standard error when one was reported', () => {
    expect(engineObservation(MAX, [1, 2], { value: 3, stderr: 0.5 })).toEqual({ x: [1, 2], y: -3, stderr: 0.5 });
    expect(engineObservation(MIN, [1], { value: 3, stderr: null })).toEqual({ x: [1], y: 3 });
    expect('stderr' in engineObservation(MIN, [1], { value: 3, stderr: null })).toBe(false);
    // A completed trial as the history reads it (stopped trials: stopped-trials.test.ts).
    const of = new ModelHistory(MAX);
    expect(of.next({ point: [0.5], value: 2, stderr: 0.1, stopped: false })).toEqual({ x: [0.5], y: -2, stderr: 0.1 });
    expect(of.next({ point: null, value: 2, stderr: null, stopped: false })).toBeNull();
  });
});

/** A small deterministic generator. */
function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** The evaluations by definition: completion order, running best (strictly better only), its steps. */
function definition(done: Completion[], better: (a: number, b: number) => boolean): KeyedEvaluation[] {
  const sorted = [...done].sort((a, b) => (a.completedAt < b.completedAt ? -1 : a.completedAt > b.completedAt ? 1 : a.trialId - b.trialId));
  let best: number | null = null;
  return sorted.map((d, i) => {
    const improved = best === null || better(d.value, best);
    if (improved) best = d.value;
    return { completedAt: d.completedAt, index: i + 1, trialId: d.trialId, value: d.value, bestSoFar: best!, improved };
  });
}

/** What a storage holding `rows` answers around a key. */
function around(rows: readonly KeyedEvaluation[], key: { completedAt: string; trialId: number }): EvaluationsAround {
  const cmp = (a: { completedAt: string; trialId: number }) => (a.completedAt < key.completedAt ? -1 : a.completedAt > key.completedAt ? 1 : a.trialId - key.trialId);
  const before = rows.filter((r) => cmp(r) < 0);
  return { before: before[before.length - 1] ?? null, after: rows.filter((r) => cmp(r) >= 0) };
}

describe('evaluation rows', () => {
  for (const [name, o, by] of [
    ['minimize', MIN, (a: number, b: number) => a < b],
    ['maximize', MAX, (a: number, b: number) => a > b],
  ] as const) {
    it(`${name}: commits of results in any order leave the rows of the definition`, async () => {
      const rnd = lcg(name === 'minimize' ? 3 : 4);
      let table: KeyedEvaluation[] = [];
      const done: Completion[] = [];
      let id = 0;
      let outOfOrder = 0;
      for (let commit = 0; commit < 40; commit++) {
        const batch = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => ({
          completedAt: rnd() < 0.05 ? '' : new Date(Date.UTC(2025, 0, 1, 0, 0, Math.floor(rnd() * 30))).toISOString(),
          trialId: ++id,
          value: Math.floor(rnd() * 7) - 3,
        }));
        const last = table[table.length - 1] ?? null;
        const storage = { evaluationsAround: async (_: string, key: { completedAt: string; trialId: number }) => (outOfOrder++, around(table, key)) };
        const rows = await completionRows(storage, 's', o, last, batch);
        // Rows replace by key, as the storage writes them.
        const byKey = new Map(table.map((r) => [`${r.completedAt}|${r.trialId}`, r]));
        for (const r of rows) byKey.set(`${r.completedAt}|${r.trialId}`, r);
        table = [...byKey.values()].sort((a, b) => a.index - b.index);
        done.push(...batch);
        expect(table).toEqual(definition(done, by));
      }
      // Both paths ran: results after the last one (no read), and results placed among earlier ones.
      expect(outOfOrder).toBeGreaterThan(5);
      expect(outOfOrder).toBeLessThan(40);
      expect(table.filter((r) => r.improved).length).toBeGreaterThan(1);
    });
  }

  it('results after the last evaluation are placed without reading the storage', async () => {
    const last: KeyedEvaluation = { completedAt: '2025-01-01T00:00:01.000Z', index: 3, trialId: 3, value: 2, bestSoFar: 1, improved: false };
    const storage = { evaluationsAround: async () => { throw new Error('no read expected'); } };
    const rows = await completionRows(storage, 's', MIN, last, [
      { completedAt: '2025-01-01T00:00:02.000Z', trialId: 5, value: 1 },
      { completedAt: '2025-01-01T00:00:02.000Z', trialId: 4, value: 0.5 },
    ]);
    expect(rows).toEqual([
      { completedAt: '2025-01-01T00:00:02.000Z', index: 4, trialId: 4, value: 0.5, bestSoFar: 0.5, improved: true },
      { completedAt: '2025-01-01T00:00:02.000Z', index: 5, trialId: 5, value: 1, bestSoFar: 0.5, improved: false },
    ]);
    expect(await completionRows(storage, 's', MIN, last, [])).toEqual([]);
    // A tie with the best is not a step; its best so far stays the earlier value.
    expect(placeEvaluations(MAX, { before: { ...last, bestSoFar: 4 }, after: [] }, [{ completedAt: 'z', trialId: 9, value: 4 }])).toEqual([
      { completedAt: 'z', index: 4, trialId: 9, value: 4, bestSoFar: 4, improved: false },
    ]);
  });

  it('a result placed before stored ones renumbers them and takes their steps when it is at least as good', () => {
    const after: KeyedEvaluation[] = [
      { completedAt: 'b', index: 2, trialId: 2, value: 1, bestSoFar: 1, improved: true },
      { completedAt: 'c', index: 3, trialId: 3, value: 0, bestSoFar: 0, improved: true },
    ];
    const before: KeyedEvaluation = { completedAt: 'a', index: 1, trialId: 1, value: 2, bestSoFar: 2, improved: true };
    expect(placeEvaluations(MIN, { before, after }, [{ completedAt: 'a2', trialId: 7, value: 1 }])).toEqual([
      { completedAt: 'a2', index: 2, trialId: 7, value: 1, bestSoFar: 1, improved: true },
      { completedAt: 'b', index: 3, trialId: 2, value: 1, bestSoFar: 1, improved: false },
      { completedAt: 'c', index: 4, trialId: 3, value: 0, bestSoFar: 0, improved: true },
    ]);
  });

  it('an imported study: its COMPLETED trials with a value, in completion order; regretHistory by the same rule', () => {
    const t = (trialId: number, state: string, value: number | null, completedAt: string | null) => ({ trialId, state, value, completedAt });
    const trials = [t(1, 'COMPLETED', 3, 'b'), t(2, 'FAILED', null, 'a'), t(3, 'COMPLETED', 5, 'a'), t(4, 'COMPLETED', null, 'c'), t(5, 'COMPLETED', 4, null), t(6, 'ACTIVE', null, null)];
    expect(completionOf(trials[1]!)).toBeNull();
    expect(completionOf(trials[3]!)).toBeNull();
    expect(completionOf(trials[4]!)).toEqual({ completedAt: '', trialId: 5, value: 4 });
    expect(importedEvaluations({ direction: 'maximize' }, trials)).toEqual([
      { completedAt: '', index: 1, trialId: 5, value: 4, bestSoFar: 4, improved: true },
      { completedAt: 'a', index: 2, trialId: 3, value: 5, bestSoFar: 5, improved: true },
      { completedAt: 'b', index: 3, trialId: 1, value: 3, bestSoFar: 5, improved: false },
    ]);
    expect(evaluationsOf(MIN, [])).toEqual([]);
    expect(regretHistory(MAX, [{ trialId: 5, value: 4 }, { trialId: 3, value: 5 }, { trialId: 1, value: 3 }], 6)).toEqual([
      { index: 1, trialId: 5, value: 4, bestSoFar: 4, regret: 2 },
      { index: 2, trialId: 3, value: 5, bestSoFar: 5, regret: 1 },
      { index: 3, trialId: 1, value: 3, bestSoFar: 5, regret: 1 },
    ]);
    expect(regretHistory(MIN, [{ trialId: 1, value: 2 }], null)[0]!.regret).toBeNull();
  });
});
